import Foundation

/// The one default for the development and test database: `RESCIND_DATABASE_URL`, else the
/// local stack's PostgreSQL (`scripts/stack.sh`, port 54329). Tests, the benchmarks and the
/// harnesses read it here; each test then works in a schema of its own.
public enum TestDatabases {
    /// The local stack's database, as `scripts/stack.sh` creates it.
    public static let localStackURL = "postgres://rescind:rescind@127.0.0.1:54329/rescind"

    /// `RESCIND_DATABASE_URL` when it is set and not empty, else `localStackURL`.
    public static var url: String {
        url(environment: ProcessInfo.processInfo.environment)
    }

    public static func url(environment: [String: String]) -> String {
        environment["RESCIND_DATABASE_URL"].flatMap { $0.isEmpty ? nil : $0 } ?? localStackURL
    }
}
