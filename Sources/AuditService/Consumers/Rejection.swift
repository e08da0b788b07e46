import Foundation
import RescindProtocol

/// A refused message: why, and whatever could be attributed (none of it trusted).
struct Rejection: Error, Sendable, Equatable {
    /// Stable code, as in `AuditNotification.Rejection.reason`.
    var reason: String
    var signer: String?
    var familyMemberID: UUID?
    var eventID: UUID?
    var deviceID: UUID?

    init(_ reason: String, signer: String? = nil, familyMemberID: UUID? = nil, eventID: UUID? = nil, deviceID: UUID? = nil) {
        self.reason = reason
        // Claimed by the sender, so never bound as it came: escaped and bounded.
        self.signer = signer.map { String(MessageLimits.escaped($0, maxLength: MessageLimits.signerLength).prefix(128)) }
        self.familyMemberID = familyMemberID
        self.eventID = eventID
        self.deviceID = deviceID
    }

    init(_ error: MessageError) {
        self.init(error.code)
    }
}
