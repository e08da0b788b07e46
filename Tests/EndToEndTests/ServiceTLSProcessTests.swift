import Foundation
import Testing

/// The service executables as an operator starts them: a certificate or key that cannot be
/// used stops the process at once with one line naming the variable (never its value).
@Suite struct ServiceTLSProcessTests {
    @Test(.timeLimit(.minutes(2)))
    func anUnusableCertificateStopsEachServiceWithOneLine() async throws {
        let directory = RescindProcess.binary.deletingLastPathComponent()
        for (program, service) in [("rescind-grant-service", "GRANT"), ("rescind-audit-service", "AUDIT")] {
            let executable = directory.appendingPathComponent(program)
            try #require(FileManager.default.isExecutableFile(atPath: executable.path), "build the products first")
            let environment = [
                "RESCIND_\(service)_TLS_CERT_FILE": "/nonexistent/secret-name/server.pem",
                "RESCIND_\(service)_TLS_KEY_FILE": "/nonexistent/secret-name/server.key",
                // Everything else the service would need is never reached: the certificate is checked first.
                "RESCIND_GRANT_SERVICE_PUBLIC_KEY": Data(count: 32).base64EncodedString(),
                "RESCIND_DATABASE_URL": "postgres://nobody@127.0.0.1:1/never",
            ]
            let output = try await RescindProcess.run([], environment: environment, timeout: .seconds(60), executable: executable)
            #expect(output.status == 1, "\(output)")
            #expect(
                output.stderr == "\(program): RESCIND_\(service)_TLS_CERT_FILE: cannot read a PEM certificate chain from the file\n",
                "\(output)")
            #expect(!output.stderr.contains("secret-name"))

            let half = ["RESCIND_\(service)_TLS_CERT_FILE": "/etc/ssl/certs/ca-certificates.crt"]
                .merging(environment.filter { !$0.key.contains("_TLS_") }) { $1 }
            let lone = try await RescindProcess.run([], environment: half, timeout: .seconds(60), executable: executable)
            #expect(lone.status == 1 && lone.stderr.hasPrefix("\(program): RESCIND_\(service)_TLS_KEY_FILE: set it together with"), "\(lone)")
        }
    }
}
