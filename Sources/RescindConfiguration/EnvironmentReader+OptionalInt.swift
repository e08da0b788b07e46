extension EnvironmentReader {
    /// An integer that has no default of ours: `nil` when unset or empty, so that the
    /// library it configures keeps its own default (e.g. a librdkafka property).
    /// - Throws: `ConfigurationError` when set to anything but an integer in `range`.
    public mutating func optionalInt(_ name: String, range: ClosedRange<Int>) throws -> Int? {
        guard let text = optionalString(name) else { return nil }
        guard let parsed = Int(text), range.contains(parsed) else {
            throw ConfigurationError(variable: name, problem: "expected an integer in \(range.lowerBound)...\(range.upperBound)")
        }
        return parsed
    }
}
