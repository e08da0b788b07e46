extension EnvironmentReader {
    /// A service's optional port for `/metrics` alone: `nil` when unset (metrics stay on the
    /// main port), 0 for any free port.
    /// - Throws: `ConfigurationError` when not a port, or when it is the main port's fixed number
    ///   (both listeners would bind it, and the second fail with a less helpful error).
    public mutating func metricsPort(_ name: String, mainPort: Int, mainVariable: String) throws -> Int? {
        guard let port = try optionalInt(name, range: 0...65_535) else { return nil }
        if port != 0 && port == mainPort {
            throw ConfigurationError(variable: name, problem: "must differ from \(mainVariable)")
        }
        return port
    }
}
