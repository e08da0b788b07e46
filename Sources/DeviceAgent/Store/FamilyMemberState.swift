import Foundation
import GRDB

/// What this device holds for one family member.
public struct FamilyMemberState: Sendable, Equatable {
    public enum Status: String, Sendable {
        case active
        /// Erased after a revocation: no FMK, cached records under a destroyed key.
        case revoked
    }

    public var familyMemberID: UUID
    public var status: Status
    /// The version of the FMK held (0 when none).
    public var fmkVersion: Int
    /// The highest version ever seen; nothing below it is accepted again.
    public var versionFloor: Int
    /// The FMK wrapped under the device's storage key; `nil` once erased.
    var wrappedFMK: Data?
    /// Where incremental sync continues (`GET records?since=`).
    public var syncCursor: Int64

    init(familyMemberID: UUID, status: Status, fmkVersion: Int, versionFloor: Int, wrappedFMK: Data?, syncCursor: Int64 = 0) {
        self.familyMemberID = familyMemberID
        self.status = status
        self.fmkVersion = fmkVersion
        self.versionFloor = versionFloor
        self.wrappedFMK = wrappedFMK
        self.syncCursor = syncCursor
    }

    init(row: Row) throws {
        guard let id = UUID(uuidString: row["family_member_id"]), let status = Status(rawValue: row["status"]) else {
            throw AgentError(.storage, "a family_members row is malformed")
        }
        familyMemberID = id
        self.status = status
        fmkVersion = row["fmk_version"]
        versionFloor = row["version_floor"]
        wrappedFMK = row["wrapped_fmk"]
        syncCursor = row["sync_cursor"]
    }
}

/// A record in the local cache, still encrypted.
struct CachedRecord: Sendable, Equatable {
    var recordID: UUID
    var familyMemberID: UUID
    var fmkVersion: Int
    var nonce: Data
    var ciphertext: Data
    var tag: Data
    var changeSeq: Int64

    init(recordID: UUID, familyMemberID: UUID, fmkVersion: Int, nonce: Data, ciphertext: Data, tag: Data, changeSeq: Int64) {
        self.recordID = recordID
        self.familyMemberID = familyMemberID
        self.fmkVersion = fmkVersion
        self.nonce = nonce
        self.ciphertext = ciphertext
        self.tag = tag
        self.changeSeq = changeSeq
    }

    init(row: Row) throws {
        guard let id = UUID(uuidString: row["record_id"]), let member = UUID(uuidString: row["family_member_id"]) else {
            throw AgentError(.storage, "a records row is malformed")
        }
        self.init(
            recordID: id, familyMemberID: member, fmkVersion: row["fmk_version"], nonce: row["nonce"],
            ciphertext: row["ciphertext"], tag: row["tag"], changeSeq: row["change_seq"])
    }
}

extension Row {
    /// A UUID column stored as text.
    func uuid(_ column: String) throws -> UUID {
        guard let text: String = self[column], let id = UUID(uuidString: text) else {
            throw AgentError(.storage, "column \(column) does not hold an id")
        }
        return id
    }
}

extension UUID {
    /// The form ids are stored and logged in.
    var text: String { uuidString.lowercased() }
}
