import Foundation
import RescindCrypto
import RescindProtocol

/// What a client has verified of each family member's key history: the owner identity key it
/// pinned (the key the next statement must be signed with) and the last statement it accepted.
/// In memory, or also in a JSON file written atomically with mode 0600 (the CLI's profile
/// directory, the agent's data directory). Nothing in it is secret.
/// `@unchecked Sendable`: every access to `contents` holds `lock`.
public final class KeyHistoryStore: @unchecked Sendable {
    /// One family member's verified state.
    public struct Entry: Codable, Sendable, Equatable {
        /// The owner key the next statement must be signed with (pinned at first use, moved only
        /// by a `transfer` or `rekey` statement signed with the key before it).
        public var ownerIdentityKey: Data
        /// The owner the next statement must name.
        public var ownerUserID: UUID
        /// The last statement verified.
        public var head: SignedKeyStatement
        /// Its hash (what the next statement's `previous_hash` must be).
        public var headHash: Data
        /// The owner's recovery public key, as the owner's `create` or `adopt` statement named it:
        /// its signature makes a `transfer` take effect before its `not_before`.
        public var ownerRecoveryKey: Data? = nil

        public var seq: Int { head.statement.seq }
        public var fmkVersion: Int { head.statement.fmkVersion }
    }

    private struct Contents: Codable {
        var familyMembers: [String: Entry] = [:]
    }

    private let path: String?
    private let lock = NSLock()
    private var contents: Contents

    /// A store that lives as long as the process (a session built without one).
    public init() {
        path = nil
        contents = Contents()
    }

    /// A store kept in `path` (created on the first write, 0600). An unreadable or corrupt file
    /// throws: a client never silently forgets what it verified (that would allow a rollback).
    public init(path: String) throws {
        self.path = path
        if FileManager.default.fileExists(atPath: path) {
            let bytes = try SecureFiles.readOwnerOnly(path, kind: "key history file")
            contents = try CanonicalJSON.decode(Contents.self, from: Data(bytes))
        } else {
            contents = Contents()
        }
    }

    /// The file name the CLI profile and the agent's data directory use.
    public static let fileName = "key-history.json"

    public func entry(_ familyMemberID: UUID) -> Entry? {
        lock.withLock { contents.familyMembers[familyMemberID.uuidString.lowercased()] }
    }

    /// Records a verified head; written to the file (and synced) before it counts.
    ///
    /// The write and its `fsync` run off Swift's cooperative pool (`BlockingWork`): every
    /// rotation of a device agent updates the head, and a sync on the pool held one of its
    /// threads (as many as cores) and with it every other task of the process, each agent
    /// of a benchmark's fleet, while the disk flushed the other agents' rotations
    /// (docs/benchmarks.md, commit → last ack).
    public func update(_ familyMemberID: UUID, _ entry: Entry) async throws {
        guard path != nil else { return try store(familyMemberID, entry) }
        try await BlockingWork.run { try self.store(familyMemberID, entry) }
    }

    private func store(_ familyMemberID: UUID, _ entry: Entry) throws {
        try lock.withLock {
            var next = contents
            next.familyMembers[familyMemberID.uuidString.lowercased()] = entry
            if let path { try SecureFiles.writeOwnerOnly(try CanonicalJSON.encode(next), to: path) }
            contents = next
        }
    }
}
