import Foundation
import RescindConfiguration
import RescindDevKit
import RescindTLS
import Testing

/// A service given a certificate and key it cannot use stops with one line naming the variable.
@Suite struct ServerTLSTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Two unrelated throwaway CAs, each with a server certificate (scripts/make-dev-ca.sh).
    static func makeCAs() async throws -> (URL, URL) {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("rescind-tls-unit-\(UUID().uuidString.prefix(8))")
        let directories = [base.appendingPathComponent("one"), base.appendingPathComponent("two")]
        for directory in directories {
            let made = try await ChildProcess.run(
                URL(fileURLWithPath: "/bin/bash"), [root.appendingPathComponent("scripts/make-dev-ca.sh").path, directory.path])
            try #require(made.status == 0, "\(made.output)")
        }
        return (directories[0], directories[1])
    }

    func server(_ certificate: String, _ key: String) -> ServerTLS {
        ServerTLS(
            certificateFile: certificate, keyFile: key, certificateVariable: "RESCIND_GRANT_TLS_CERT_FILE",
            keyVariable: "RESCIND_GRANT_TLS_KEY_FILE")
    }

    func variable(of body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch let error as ConfigurationError {
            #expect(!error.description.contains("\n"))
            return error.variable
        } catch {
            Issue.record("not a ConfigurationError: \(error)")
            return nil
        }
    }

    @Test func aMatchingCertificateAndKeyMakeAServerConfiguration() async throws {
        let (one, two) = try await Self.makeCAs()
        defer { try? FileManager.default.removeItem(at: one.deletingLastPathComponent()) }
        let good = server(one.appendingPathComponent("server.pem").path, one.appendingPathComponent("server.key").path)
        #expect(throws: Never.self) { _ = try good.configuration() }

        // Missing, not PEM, or a key of another certificate: each names its own variable.
        let missing = server("/nonexistent/server.pem", one.appendingPathComponent("server.key").path)
        #expect(variable { _ = try missing.configuration() } == "RESCIND_GRANT_TLS_CERT_FILE")
        let keyAsCertificate = server(one.appendingPathComponent("server.key").path, one.appendingPathComponent("server.key").path)
        #expect(variable { _ = try keyAsCertificate.configuration() } == "RESCIND_GRANT_TLS_CERT_FILE")
        let noKey = server(one.appendingPathComponent("server.pem").path, one.appendingPathComponent("server.pem").path)
        #expect(variable { _ = try noKey.configuration() } == "RESCIND_GRANT_TLS_KEY_FILE")
        let otherKey = server(one.appendingPathComponent("server.pem").path, two.appendingPathComponent("server.key").path)
        #expect(variable { _ = try otherKey.configuration() } == "RESCIND_GRANT_TLS_KEY_FILE")
    }

    @Test func bothVariablesOrNeither() throws {
        var neither = EnvironmentReader([:])
        #expect(try neither.serverTLS(certificate: "RESCIND_AUDIT_TLS_CERT_FILE", key: "RESCIND_AUDIT_TLS_KEY_FILE") == nil)
        var both = EnvironmentReader(["RESCIND_AUDIT_TLS_CERT_FILE": "/c.pem", "RESCIND_AUDIT_TLS_KEY_FILE": "/k.pem"])
        let tls = try #require(try both.serverTLS(certificate: "RESCIND_AUDIT_TLS_CERT_FILE", key: "RESCIND_AUDIT_TLS_KEY_FILE"))
        #expect(tls.certificateFile == "/c.pem" && tls.keyFile == "/k.pem")
        var onlyCertificate = EnvironmentReader(["RESCIND_AUDIT_TLS_CERT_FILE": "/c.pem"])
        #expect(variable { _ = try onlyCertificate.serverTLS(certificate: "RESCIND_AUDIT_TLS_CERT_FILE", key: "RESCIND_AUDIT_TLS_KEY_FILE") }
            == "RESCIND_AUDIT_TLS_KEY_FILE")
    }
}
