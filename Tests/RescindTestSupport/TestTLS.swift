import Foundation
import RescindTLS
import Synchronization

/// The certificate authority the test harnesses run the services with, so that every HTTP hop
/// of the test suite goes over TLS: the local stack's (`.stack/tls`, exported through
/// `.stack/env` as `RESCIND_CA_FILE`, `RESCIND_GRANT_TLS_CERT_FILE` and `RESCIND_GRANT_TLS_KEY_FILE`),
/// or, without those variables, one made for this test process by `scripts/make-dev-ca.sh`.
public struct TestTLS: Sendable {
    /// PEM of the CA.
    public let caFile: String
    /// The server certificate (127.0.0.1, ::1, localhost) and its key.
    public let certificateFile: String
    public let keyFile: String

    /// What a service is given to serve HTTPS, under the names of `service`'s variables
    /// (`GRANT` or `AUDIT`). A stopping test service waits 100 ms for its idle clients' TLS
    /// close_notify (each test stops one or two services; a second each adds up).
    public func server(_ service: String) -> ServerTLS {
        ServerTLS(
            certificateFile: certificateFile, keyFile: keyFile, certificateVariable: "RESCIND_\(service)_TLS_CERT_FILE",
            keyVariable: "RESCIND_\(service)_TLS_KEY_FILE", shutdownTimeout: .milliseconds(100))
    }

    /// A client that trusts this CA only and refuses plain HTTP.
    public var client: ClientTLS { ClientTLS(caFile: caFile) }

    /// Environment of a process that serves or calls over this CA (services, the CLI, agents).
    public var environment: [String: String] {
        [
            "RESCIND_CA_FILE": caFile, "RESCIND_AGENT_CA_FILE": caFile,
            "RESCIND_GRANT_TLS_CERT_FILE": certificateFile, "RESCIND_GRANT_TLS_KEY_FILE": keyFile,
            "RESCIND_AUDIT_TLS_CERT_FILE": certificateFile, "RESCIND_AUDIT_TLS_KEY_FILE": keyFile,
        ]
    }

    /// Base64 of the SHA-256 of the server certificate's public key: what Chromium's
    /// `--ignore-certificate-errors-spki-list` pins (a browser cannot be handed a CA file).
    public func serverKeyPin() async throws -> String {
        let result = try await ChildProcess.run(
            URL(fileURLWithPath: "/bin/sh"),
            ["-c", "openssl x509 -in \"$0\" -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64",
             certificateFile])
        let pin = result.output.trimmingCharacters(in: .whitespacesAndNewlines)
        guard result.status == 0, pin.count == 44 else { throw HarnessError.timedOut("the server key's pin: \(result.output)") }
        return pin
    }

    private static let made = Mutex<[String: TestTLS]>([:])

    /// The suite's CA: the stack's when its variables are set, else one made once per process.
    public static func shared() async throws -> TestTLS {
        let environment = ProcessInfo.processInfo.environment
        if let ca = environment["RESCIND_CA_FILE"], let certificate = environment["RESCIND_GRANT_TLS_CERT_FILE"],
            let key = environment["RESCIND_GRANT_TLS_KEY_FILE"], !ca.isEmpty, !certificate.isEmpty, !key.isEmpty
        {
            return TestTLS(caFile: ca, certificateFile: certificate, keyFile: key)
        }
        return try await make("suite")
    }

    /// Another, unrelated CA with a certificate for the same names: what an impostor holds.
    public static func impostor() async throws -> TestTLS {
        try await make("impostor")
    }

    private static func make(_ name: String) async throws -> TestTLS {
        if let known = made.withLock({ $0[name] }) { return known }
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("rescind-test-tls-\(ProcessInfo.processInfo.processIdentifier)-\(name)")
        let script = GrantServiceHarness.repositoryRoot.appendingPathComponent("scripts/make-dev-ca.sh")
        let result = try await ChildProcess.run(URL(fileURLWithPath: "/bin/bash"), [script.path, directory.path])
        guard result.status == 0 else { throw HarnessError.timedOut("make-dev-ca.sh failed: \(result.output)") }
        let tls = TestTLS(
            caFile: directory.appendingPathComponent("ca.pem").path,
            certificateFile: directory.appendingPathComponent("server.pem").path,
            keyFile: directory.appendingPathComponent("server.key").path)
        made.withLock { $0[name] = tls }
        return tls
    }
}
