import Foundation
import RescindProtocol

/// The last chain head this machine verified for each family member (`access-log-heads.json`
/// in the profile directory, 0600, written atomically): the seq and the hash of the entry at
/// that seq. A signed head proves only that the audit service once signed it; remembered, it
/// also proves the log never shrinks or forks under this reader. An audit database that cut
/// its newest entries off and restored an older head the service had signed, or that removed
/// an entry and let the service append new ones in its place, serves a log that verifies on
/// its own and fails against this memory (`rolled_back`, `rewritten`).
public struct VerifiedHeads: Sendable {
    public static let fileName = "access-log-heads.json"
    public let path: String

    public init(directory: String) {
        path = (directory as NSString).appendingPathComponent(Self.fileName)
    }

    public struct Head: Codable, Sendable, Equatable {
        public var seq: Int64
        public var hash: Data
    }

    /// Every remembered head, by family member; empty before the first verification.
    /// - Throws: `AgentError` for a file others can read or that is not this file.
    public func all() throws -> [UUID: Head] {
        guard FileManager.default.fileExists(atPath: path) else { return [:] }
        let bytes = try SecureFiles.readOwnerOnly(path, kind: "verified access-log heads")
        guard let heads = try? JSONDecoder().decode([UUID: Head].self, from: Data(bytes)) else {
            throw AgentError(.configuration, "\(path) does not hold verified access-log heads")
        }
        return heads
    }

    /// What is wrong with `entries` (in seq order) served under `head`, against the head
    /// remembered for `familyMemberID`: nothing before the first verification.
    public func problems(
        _ familyMemberID: UUID, entries: [AccessLogEntry], head: AccessLogHead
    ) throws -> [ChainVerificationReport.Problem] {
        guard let remembered = try all()[familyMemberID] else { return [] }
        if head.seq < remembered.seq {
            return [
                .init(
                    code: "rolled_back", seq: head.seq, logID: nil,
                    message: "the signed chain head is at seq \(head.seq), older than seq \(remembered.seq) this machine "
                        + "verified before: newer entries were removed and an older signed head restored")
            ]
        }
        guard let entry = entries.first(where: { $0.seq == remembered.seq }) else { return [] }  // a gap, reported already
        if entry.entryHash != remembered.hash {
            return [
                .init(
                    code: "rewritten", seq: entry.seq, logID: entry.logID,
                    message: "entry \(entry.logID) at seq \(entry.seq) is not the entry this machine verified there before: "
                        + "the log was cut back and written again")
            ]
        }
        return []
    }

    /// Remembers `head` as the last verified one for `familyMemberID` (it only ever moves forward).
    public func remember(_ familyMemberID: UUID, _ head: Head) throws {
        var heads = try all()
        if let known = heads[familyMemberID], known.seq > head.seq { return }
        heads[familyMemberID] = head
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try SecureFiles.writeOwnerOnly(try encoder.encode(heads), to: path)
    }
}
