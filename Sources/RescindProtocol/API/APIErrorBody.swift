import RescindMacros

/// The JSON body of every HTTP error: `{"error": {"code": "...", "message": "..."}}`.
public struct APIErrorBody: Codable, Sendable, Equatable {
    @MemberwiseInit
    public struct Detail: Codable, Sendable, Equatable {
        /// Stable, machine-readable (e.g. `version_conflict`).
        public var code: String
        /// For people; never contains secrets or stored values.
        public var message: String
    }

    public var error: Detail

    public init(code: String, message: String) {
        self.error = Detail(code: code, message: message)
    }
}
