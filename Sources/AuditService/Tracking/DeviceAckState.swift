import RescindPostgres
import RescindProtocol

/// Where an expected device stands in a revocation.
enum DeviceAckState: String, Sendable, CaseIterable {
    case pending
    case applied
    case alreadyApplied = "already_applied"
    case failed
    /// No ack by the deadline (yet): a late ack still moves it on, marked late.
    case overdue

    init(_ outcome: DeviceAck.Outcome) {
        switch outcome {
        case .applied: self = .applied
        case .alreadyApplied: self = .alreadyApplied
        case .failed: self = .failed
        }
    }

    /// The device did what the revocation needs; nothing can undo that.
    var isDone: Bool { self == .applied || self == .alreadyApplied }
}

extension DeviceAckState: PostgresEncodable, PostgresDecodable {}
extension DeviceAction: PostgresEncodable, PostgresDecodable {}
