import Foundation
import GRDB
import RescindClient

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
