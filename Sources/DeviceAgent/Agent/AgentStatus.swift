import Foundation
import GRDB
import RescindClient
import RescindProtocol

/// What a device holds, for `rescind-agent status` and monitoring: family members with
/// their FMK versions and record counts, the last command, owed acks, and counters.
/// Contains identifiers and numbers only, never key material or records.
public struct AgentStatus: Sendable, Codable {
    public struct Member: Sendable, Codable {
        public var familyMemberID: UUID
        public var status: String
        public var fmkVersion: Int
        public var versionFloor: Int
        public var records: Int
        /// The highest change sequence among the cached records (0 when none): equal to the
        /// grant service's for the family member once every record change has reached the device.
        public var latestChange: Int64
    }

    public struct Command: Sendable, Codable {
        public var commandID: UUID
        public var action: String
        public var familyMemberID: UUID
        public var fmkVersion: Int
        public var state: String
        public var outcome: String?
        public var completedAt: Date?
    }

    public var deviceID: UUID
    public var userID: UUID
    public var familyMembers: [Member]
    public var lastCommand: Command?
    public var pendingCommands: Int
    /// Commands received while locked, sealed until the unlock (erasures among them are
    /// already carried out; their acks are signed at the unlock).
    public var sealedCommands: Int
    public var owedAcks: Int
    /// Acks the broker acknowledged.
    public var sentAcks: Int
    /// Receipts (`delivered`, `not_now`, signed by the receipt key) not yet acknowledged by the
    /// broker (those it acknowledged are deleted, and counted in `counters["receipts_sent"]`).
    public var owedReceipts: Int
    public var counters: [String: Int]
    /// Whether cached records are encrypted at rest under the database key.
    public var atRestEncryption: Bool
    /// Governed operations this device was told are pending (`GovernanceNotice`), oldest first.
    public var pendingGovernance: [GovernanceNotice]

    /// Reads the status of a data directory without unlocking anything.
    public static func read(configuration: AgentConfiguration) async throws -> AgentStatus {
        try SecureFiles.checkOwnerOnly(configuration.dataDirectory, kind: "data directory", fix: "chmod 700")
        let bytes = try SecureFiles.readOwnerOnly(configuration.keystorePath, kind: "keystore")
        let file = try KeystoreFile.decode(Data(bytes), expecting: KeystoreFile.keystoreFormat, path: configuration.keystorePath)
        let store = try AgentStore(path: configuration.databasePath)
        return try await read(store: store, deviceID: file.deviceID, userID: file.userID)
    }

    static func read(store: AgentStore, deviceID: UUID, userID: UUID) async throws -> AgentStatus {
        let counters = try await store.counters()
        let pendingGovernance = try await store.pendingNotices()
        return try await store.read { db in
            let members = try Row.fetchAll(
                db,
                sql: """
                    SELECT f.family_member_id, f.status, f.fmk_version, f.version_floor,
                           (SELECT count(*) FROM records r WHERE r.family_member_id = f.family_member_id) AS records,
                           (SELECT coalesce(max(change_seq), 0) FROM records r WHERE r.family_member_id = f.family_member_id) AS latest_change
                    FROM family_members f ORDER BY f.family_member_id
                    """
            ).map { row in
                Member(
                    familyMemberID: try row.uuid("family_member_id"), status: row["status"],
                    fmkVersion: row["fmk_version"], versionFloor: row["version_floor"], records: row["records"],
                    latestChange: row["latest_change"])
            }
            let last = try Row.fetchOne(db, sql: "SELECT * FROM commands ORDER BY rowid DESC LIMIT 1").map { row in
                Command(
                    commandID: try row.uuid("command_id"), action: row["action"],
                    familyMemberID: try row.uuid("family_member_id"), fmkVersion: row["fmk_version"],
                    state: row["state"], outcome: row["outcome"],
                    completedAt: (row["completed_at"] as Double?).map(Date.init(timeIntervalSince1970:)))
            }
            return AgentStatus(
                deviceID: deviceID, userID: userID, familyMembers: members, lastCommand: last,
                pendingCommands: try Int.fetchOne(db, sql: "SELECT count(*) FROM commands WHERE state = 'pending'") ?? 0,
                sealedCommands: try Int.fetchOne(db, sql: "SELECT count(*) FROM sealed_inbox") ?? 0,
                owedAcks: try Int.fetchOne(db, sql: "SELECT count(*) FROM ack_outbox WHERE sent_at IS NULL AND kind <> 'receipt'") ?? 0,
                sentAcks: try Int.fetchOne(
                    db, sql: "SELECT count(*) FROM ack_outbox WHERE sent_at IS NOT NULL AND kind <> 'receipt'") ?? 0,
                owedReceipts: try Int.fetchOne(
                    db, sql: "SELECT count(*) FROM ack_outbox WHERE sent_at IS NULL AND kind = 'receipt'") ?? 0,
                counters: counters, atRestEncryption: try AgentStore.atRestEnabled(in: db), pendingGovernance: pendingGovernance)
        }
    }
}
