import Foundation
import RescindDevKit
import RescindPostgres
import Testing

/// The local stack's PostgreSQL serves TLS with the stack's certificate (`scripts/stack.sh up`),
/// and the production connection path verifies it: `sslmode=verify-full` with the stack's CA
/// as `sslrootcert`, passed through the URL to libpq. Needs `RESCIND_CA_FILE` (in `.stack/env`).
@Suite struct PostgresTLSTests {
    static let environment = ProcessInfo.processInfo.environment
    static let caFile = environment["RESCIND_CA_FILE"].flatMap { $0.isEmpty ? nil : $0 }
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The test URL with `sslmode=verify-full&sslrootcert=<ca>` in place of whatever it asked for.
    static func url(rootCertificate: String) -> String {
        let base = environment[PostgresConfiguration.environmentVariable].flatMap { $0.isEmpty ? nil : $0 }
            ?? TestDatabase.defaultURL
        var components = URLComponents(string: base)!
        var items = (components.queryItems ?? []).filter { !["sslmode", "sslrootcert"].contains($0.name) }
        items += [URLQueryItem(name: "sslmode", value: "verify-full"), URLQueryItem(name: "sslrootcert", value: rootCertificate)]
        components.queryItems = items
        return components.string!
    }

    @Test(.enabled(if: caFile != nil, "needs the stack's CA: source .stack/env after scripts/stack.sh up"))
    func theConnectionIsEncryptedAndTheServerVerified() async throws {
        let configuration = try PostgresConfiguration(url: Self.url(rootCertificate: try #require(Self.caFile)))
        let connection = try await PostgresConnection.connect(configuration: configuration, logger: TestDatabase.logger)
        let rows = try await connection.query("SELECT ssl, version FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
        let (ssl, version) = try rows[0].decode(Bool.self, String.self)
        await connection.close()
        #expect(ssl, "the connection is not encrypted")
        #expect(version.hasPrefix("TLSv1.2") || version.hasPrefix("TLSv1.3"), "\(version)")
    }

    /// An impostor on the database's address (a certificate another CA signed) is refused.
    @Test(.enabled(if: caFile != nil, "needs the stack's CA: source .stack/env after scripts/stack.sh up"))
    func aServerTheCADidNotSignIsRefused() async throws {
        let other = FileManager.default.temporaryDirectory.appendingPathComponent("rescind-pg-other-ca-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: other) }
        let made = try await ChildProcess.run(
            URL(fileURLWithPath: "/bin/bash"), [Self.root.appendingPathComponent("scripts/make-dev-ca.sh").path, other.path])
        try #require(made.status == 0, "\(made.output)")
        let configuration = try PostgresConfiguration(url: Self.url(rootCertificate: other.appendingPathComponent("ca.pem").path))
        await #expect(throws: PostgresError.self) {
            let connection = try await PostgresConnection.connect(configuration: configuration, logger: TestDatabase.logger)
            await connection.close()
        }
    }
}
