import Foundation
import RescindPostgres
import RescindProtocol

/// One event of the live stream (SSE): a revocation's new state, an access change,
/// or a notification. `data` is the JSON the client receives.
struct StreamEvent: Sendable {
    enum Kind: String, Sendable {
        /// `RevocationStatus`: the whole current state (clients replace what they had).
        case revocation
        /// An access change (`AccessEvent` without key material).
        case accessEvent = "access_event"
        /// An `AuditNotification` (also published on `audit_notifications`).
        case notification
    }

    var kind: Kind
    /// `nil` for what cannot be attributed (a rejected message of unknown origin):
    /// only unfiltered subscribers see those.
    var familyMemberID: UUID?
    var data: PostgresJSON

    init(_ kind: Kind, familyMemberID: UUID?, payload: some Encodable) throws {
        self.kind = kind
        self.familyMemberID = familyMemberID
        self.data = PostgresJSON(bytes: [UInt8](try CanonicalJSON.encode(payload)))
    }
}
