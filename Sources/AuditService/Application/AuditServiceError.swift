/// Why the audit service could not start or do its work. Descriptions name the
/// setting or resource, never key bytes or message contents.
public enum AuditServiceError: Error, CustomStringConvertible, Sendable {
    /// A setting or file is unusable.
    case configuration(String)
    /// The grant service could not be reached or answered something unusable.
    case grantService(String)

    public var code: String {
        switch self {
        case .configuration: "configuration"
        case .grantService: "grant_service"
        }
    }

    public var description: String {
        switch self {
        case .configuration(let problem): "configuration: \(problem)"
        case .grantService(let problem): "grant service: \(problem)"
        }
    }
}
