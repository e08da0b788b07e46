import RescindMacros

/// Reads typed settings from environment variables, so that every executable
/// parses `RESCIND_*` the same way and names the variable when a value is wrong.
public struct EnvironmentReader: Sendable {
    private let environment: [String: String]
    /// Every variable asked for, so deployments can be checked against what the code reads.
    public private(set) var namesRead: [String] = []

    public init(_ environment: [String: String]) {
        self.environment = environment
    }

    private mutating func raw(_ name: String) -> String? {
        namesRead.append(name)
        guard let value = environment[name]?.trimmingWhitespace(), !value.isEmpty else { return nil }
        return value
    }

    public mutating func string(_ name: String, default value: String) -> String {
        raw(name) ?? value
    }

    public mutating func optionalString(_ name: String) -> String? {
        raw(name)
    }

    /// A secret (a passphrase) exactly as set, white space included; nil when unset or empty.
    public mutating func secret(_ name: String) -> String? {
        namesRead.append(name)
        guard let value = environment[name], !value.isEmpty else { return nil }
        return value
    }

    /// One setting read on its own: `EnvironmentReader(environment).optionalString(name)`.
    public static func value(_ name: String, in environment: [String: String]) -> String? {
        var reader = EnvironmentReader(environment)
        return reader.optionalString(name)
    }

    /// One secret read on its own (`secret`).
    public static func secret(_ name: String, in environment: [String: String]) -> String? {
        var reader = EnvironmentReader(environment)
        return reader.secret(name)
    }

    public mutating func int(_ name: String, default value: Int, range: ClosedRange<Int>) throws -> Int {
        guard let text = raw(name) else { return value }
        guard let parsed = Int(text), range.contains(parsed) else {
            throw ConfigurationError(variable: name, problem: "expected an integer in \(range.lowerBound)...\(range.upperBound)")
        }
        return parsed
    }

    public mutating func bool(_ name: String, default value: Bool) throws -> Bool {
        guard let text = raw(name) else { return value }
        switch text.lowercased() {
        case "1", "true", "yes", "on": return true
        case "0", "false", "no", "off": return false
        default: throw ConfigurationError(variable: name, problem: "expected true or false")
        }
    }

    /// Whole seconds, at least 1.
    public mutating func seconds(_ name: String, default value: Duration) throws -> Duration {
        guard raw(name) != nil else { return value }
        namesRead.removeLast()
        return .seconds(try int(name, default: 0, range: 1...Int(Int32.max)))
    }

    /// A PostgreSQL identifier we are willing to interpolate: lowercase letters, digits, `_`.
    public mutating func identifier(_ name: String, default value: String) throws -> String {
        let text = raw(name) ?? value
        let allowed = text.utf8.allSatisfy { ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 95 }
        guard allowed, let first = text.utf8.first, !(48...57).contains(first), text.utf8.count <= 63 else {
            throw ConfigurationError(variable: name, problem: "expected a lowercase identifier ([a-z_][a-z0-9_]*)")
        }
        return text
    }
}

/// A setting that cannot be used, named by its variable; the value itself is not repeated
/// (it may be a secret).
@MemberwiseInit
public struct ConfigurationError: Error, CustomStringConvertible, Sendable {
    public let variable: String
    public let problem: String

    public var description: String { "\(variable): \(problem)" }
}

extension String {
    fileprivate func trimmingWhitespace() -> String {
        var scalars = Substring(self)
        while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }
}
