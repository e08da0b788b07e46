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
        self.signer = signer.map { String($0.prefix(200)) }
        self.familyMemberID = familyMemberID
        self.eventID = eventID
        self.deviceID = deviceID
    }

    init(_ error: MessageError) {
        self.init(error.code)
    }
}
