import RescindPostgres
import RescindProtocol

/// Where an expected device's command stands in a revocation (its lifecycle).
///
/// `pending` (issued) → `delivered` (the device's signed receipt: in its inbox) or `not_now`
/// (locked, held sealed until the unlock) → `applied` | `already_applied` | `healed` (done) or
/// `failed`. `overdue` marks a device with no answer at the deadline; a later answer still
/// moves it on, marked late. `reissued` and `expired` are the re-issue path's. A receipt moves a
/// device only among `pending`, `delivered` and `not_now`; elsewhere it is history only.
enum DeviceAckState: String, Sendable, CaseIterable {
    case pending
    case delivered
    case notNow = "not_now"
    case applied
    case alreadyApplied = "already_applied"
    case healed
    case failed
    /// No ack by the deadline (yet): a late ack still moves it on, marked late.
    case overdue
    /// A new command was sent for a failed or overdue device.
    case reissued
    /// Attempts exhausted: nothing more is sent; an answer still moves it on.
    case expired

    init(_ outcome: DeviceAck.Outcome) {
        switch outcome {
        case .applied: self = .applied
        case .alreadyApplied: self = .alreadyApplied
        case .healed: self = .healed
        case .failed: self = .failed
        case .delivered: self = .delivered
        case .notNow: self = .notNow
        }
    }

    /// The device did what the revocation needs; nothing can undo that.
    var isDone: Bool { self == .applied || self == .alreadyApplied || self == .healed }
}

extension DeviceAckState: PostgresEncodable, PostgresDecodable {}
extension DeviceAction: PostgresEncodable, PostgresDecodable {}
