import Foundation

/// Where and how to connect, from a libpq connection URI
/// (`postgres://user:password@host:port/dbname?sslmode=require&…`) or a `key=value` string.
///
/// libpq itself parses the URL (`PQconninfoParse`), so every libpq option works. The password
/// stays in memory for connecting but `description`, `debugDescription` and reflection
/// (`dump`, `String(reflecting:)`) redact it.
public struct PostgresConfiguration: Sendable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// The environment variable services and tests read the URL from.
    public static let environmentVariable = "RESCIND_DATABASE_URL"

    /// The connection options as libpq parsed them, in libpq's order, password included.
    let parameters: [(keyword: String, value: String)]

    /// `application_name`, shown in `pg_stat_activity`; overrides the URL's.
    public var applicationName: String?

    /// Seconds to wait for a connection to be established (libpq `connect_timeout`) unless the URL sets one.
    public var connectTimeoutSeconds: Int = 10

    /// How long one statement (or one COPY chunk), or a caller waiting for a free pool
    /// connection, waits for the server before asking it, on a fresh connection, whether it
    /// answers at all (`PQpingParams`, bounded the same, at least 2 s). A server that answers
    /// keeps the call waiting another bound (slow work is never cut: a revocation's commit over
    /// a large family member takes what it takes); one that does not (a partition, a frozen
    /// host: TCP open, no reply) ends the call with `.timedOut`, the connection closed and its
    /// statement cancelled. `nil`: no bound (such a server then blocks the caller for ever).
    /// The services set it from `RESCIND_DATABASE_TIMEOUT_SECONDS`.
    public var callTimeout: Duration?

    /// Schemas for unqualified names (`search_path`), set at connection start for every
    /// connection, so statements never need `SET search_path` (which would leak across pool users).
    public var searchPath: [String]?

    /// Parses `url`.
    /// - Throws: `PostgresError` `.invalidConfiguration`. libpq's parse message is withheld
    ///   because it may quote part of the URL, including the password.
    public init(url: String) throws {
        parameters = try LibPQConnectionInfo.parse(url)
    }

    /// Reads the URL from `RESCIND_DATABASE_URL`, or uses `defaultURL` when it is unset or empty.
    /// - Throws: `.invalidConfiguration` when neither is available or the URL does not parse.
    public init(environment: [String: String] = ProcessInfo.processInfo.environment, defaultURL: String? = nil) throws {
        let given = environment[Self.environmentVariable].flatMap { $0.isEmpty ? nil : $0 }
        guard let url = given ?? defaultURL else {
            throw PostgresError(code: .invalidConfiguration, message: "\(Self.environmentVariable) is not set")
        }
        try self.init(url: url)
    }

    /// Options actually passed to `PQconnectdbParams`: the URL's, then this struct's overrides.
    var connectionParameters: [(keyword: String, value: String)] {
        var result = parameters.filter { !Self.overridden.contains($0.keyword) }
        let given = Dictionary(parameters.map { ($0.keyword, $0.value) }, uniquingKeysWith: { first, _ in first })
        result.append(("client_encoding", "UTF8"))
        result.append(("connect_timeout", given["connect_timeout"] ?? String(connectTimeoutSeconds)))
        if let name = applicationName ?? given["application_name"] {
            result.append(("application_name", name))
        }
        var options = given["options"] ?? ""
        if let searchPath {
            // Backend option syntax: whitespace separates switches, backslash escapes.
            let value = searchPath.map(quoteIdentifier).joined(separator: ",")
            let escaped = value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: " ", with: "\\ ")
            options += (options.isEmpty ? "" : " ") + "-c search_path=" + escaped
        }
        if !options.isEmpty { result.append(("options", options)) }
        return result
    }

    private static let overridden: Set<String> = ["client_encoding", "connect_timeout", "application_name", "options"]
    private static let secretKeywords: Set<String> = ["password", "sslpassword"]

    /// `keyword=value` pairs with secrets replaced by `***`.
    public var description: String {
        let shown = connectionParameters.map { keyword, value in
            "\(keyword)=\(Self.secretKeywords.contains(keyword) ? "***" : value)"
        }
        return "PostgresConfiguration(\(shown.joined(separator: " ")))"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(self, children: ["redacted": description], displayStyle: .struct)
    }
}
