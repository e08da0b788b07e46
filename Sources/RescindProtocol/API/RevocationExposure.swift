import Foundation
import RescindMacros

/// What the revoked user could still hold when a revocation was committed: per device of
/// theirs, the last FMK version and change-feed position it fetched, when, and how many of the
/// family member's records it had been given (`schemas/rescind.revocation_exposure.v1.schema.json`).
///
/// The grant service takes it in the commit's own transaction from `device_sync_state`, seals it
/// to the owner's X25519 key (an anonymous sealed box) and keeps only the sealed bytes: the
/// stored report is readable by the owner's client alone. Whether each device acknowledged
/// its erasure is the audit service's to say; the client joins the two.
public struct RevocationExposure: Codable, Sendable, Equatable {
    public static let schema = "rescind.revocation_exposure.v1"

    public var schema: String
    public var eventID: UUID
    public var familyMemberID: UUID
    public var revokedUserID: UUID
    /// The owner who committed the revocation: the one it is sealed to.
    public var ownerUserID: UUID
    /// The version the revoked user could hold (the revocation re-encrypted from it) and the new one.
    public var fromFMKVersion: Int
    public var newFMKVersion: Int
    /// Every record of the family member at the commit.
    public var recordsTotal: Int
    public var committedAt: Date
    public var devices: [Device]

    public init(
        eventID: UUID, familyMemberID: UUID, revokedUserID: UUID, ownerUserID: UUID, fromFMKVersion: Int,
        newFMKVersion: Int, recordsTotal: Int, committedAt: Date, devices: [Device]
    ) {
        self.schema = Self.schema
        self.eventID = eventID
        self.familyMemberID = familyMemberID
        self.revokedUserID = revokedUserID
        self.ownerUserID = ownerUserID
        self.fromFMKVersion = fromFMKVersion
        self.newFMKVersion = newFMKVersion
        self.recordsTotal = recordsTotal
        self.committedAt = committedAt
        self.devices = devices
    }

    /// One device of the revoked user, as the grant service last saw it before the commit.
    @MemberwiseInit
    public struct Device: Codable, Sendable, Equatable {
        public var deviceID: UUID
        public var name: String
        public var role: DeviceRole
        public var retiredAt: Date?
        /// Told to erase by this revocation (an active agent); interactive and retired devices are not.
        public var commanded: Bool
        /// The version of the last key it fetched; nil if it never fetched a key or a feed page of
        /// this family member. A device may also keep keys of earlier versions it fetched before.
        public var fmkVersion: Int?
        /// The furthest change-feed position it was given; nil if the feed never gave it a change.
        public var changeSeq: Int64?
        /// When it last fetched the key or a feed page (to the minute); nil: never.
        public var lastSyncAt: Date?
        /// Records whose current ciphertext (the one the revocation re-encrypted) it had been
        /// given: those at or below its change-feed position.
        public var recordsFetched: Int
        /// Records and deletions after its position: it holds none of them in their current form,
        /// at most an earlier ciphertext of the records that existed when it synced.
        public var changesSinceSync: Int

        /// It fetched neither the key nor a page of this family member.
        public var neverSynced: Bool { lastSyncAt == nil }

        enum CodingKeys: CodingKey {
            case deviceID, name, role, retiredAt, commanded, fmkVersion, changeSeq, lastSyncAt, recordsFetched, changesSinceSync
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(deviceID, forKey: .deviceID)
            try container.encode(name, forKey: .name)
            try container.encode(role, forKey: .role)
            try container.encode(retiredAt, forKey: .retiredAt)
            try container.encode(commanded, forKey: .commanded)
            try container.encode(fmkVersion, forKey: .fmkVersion)
            try container.encode(changeSeq, forKey: .changeSeq)
            try container.encode(lastSyncAt, forKey: .lastSyncAt)
            try container.encode(recordsFetched, forKey: .recordsFetched)
            try container.encode(changesSinceSync, forKey: .changesSinceSync)
        }
    }
}
