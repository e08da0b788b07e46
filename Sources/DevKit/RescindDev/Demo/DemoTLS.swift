import Foundation
import RescindDevKit

/// The certificate authority and server certificate of the demo: the local stack's when
/// `.stack/env` is sourced (`RESCIND_CA_FILE`, `RESCIND_GRANT_TLS_CERT_FILE`,
/// `RESCIND_GRANT_TLS_KEY_FILE`), else a throwaway one made by `scripts/make-dev-ca.sh` in the
/// demo's state directory. Every HTTP hop of the demo goes over TLS with it.
struct DemoTLS: Sendable {
    let caFile: String
    let certificateFile: String
    let keyFile: String

    static func resolve(environment: [String: String], repository: URL, directory: URL) async throws -> DemoTLS {
        if let ca = environment["RESCIND_CA_FILE"], let certificate = environment["RESCIND_GRANT_TLS_CERT_FILE"],
            let key = environment["RESCIND_GRANT_TLS_KEY_FILE"], !ca.isEmpty, !certificate.isEmpty, !key.isEmpty
        {
            return DemoTLS(caFile: ca, certificateFile: certificate, keyFile: key)
        }
        let tls = directory.appendingPathComponent("tls")
        let made = try await ChildProcess.run(
            URL(fileURLWithPath: "/bin/bash"), [repository.appendingPathComponent("scripts/make-dev-ca.sh").path, tls.path])
        guard made.status == 0 else {
            throw CLIError("scripts/make-dev-ca.sh could not make the demo's certificates (is openssl installed?)")
        }
        return DemoTLS(
            caFile: tls.appendingPathComponent("ca.pem").path, certificateFile: tls.appendingPathComponent("server.pem").path,
            keyFile: tls.appendingPathComponent("server.key").path)
    }
}
