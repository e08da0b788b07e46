import Foundation

/// A stream event as stored, with its position (the SSE `id`).
struct StoredStreamEvent: Sendable {
    var id: Int64
    var kind: String
    var familyMemberID: UUID?
    /// The family member's owner when the event was read (the audit service's
    /// `family_members`): an owner's stream carries the events of what they own now.
    var ownerUserID: UUID?
    var data: [UInt8]

    /// The SSE wire form: `id`, `event` and one `data` line (JSON has no raw newlines).
    var serverSentEvent: String {
        "id: \(id)\nevent: \(kind)\ndata: \(String(decoding: data, as: UTF8.self))\n\n"
    }
}
