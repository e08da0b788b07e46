import Foundation
import RescindClient
import RescindProtocol

/// A backup of the record cache that contains no key: per family member its status and
/// FMK version, and every live record exactly as the grant service stores it (AES-256-GCM
/// under the FMK; the at-rest layer is removed, since its key is never exported).
///
/// No FMK in any form (wrapped or not), no keystore content, no command history. The
/// archive is therefore useless on its own: its records open only with an FMK the grant
/// service still hands to an authorised user, so a revoked user's backup stays closed.
/// Erased records are left out (nothing can open them).
public struct BackupArchive: Codable, Sendable {
    public static let format = "rescind-agent-backup-v1"

    public struct Member: Codable, Sendable {
        public var familyMemberID: UUID
        public var status: String
        public var fmkVersion: Int
        public var versionFloor: Int
    }

    /// A record exactly as the grant service serves it.
    public typealias Record = RecordResponse

    public var format: String
    public var deviceID: UUID
    public var userID: UUID
    public var exportedAt: Date
    public var familyMembers: [Member]
    public var records: [Record]

    func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return try encoder.encode(self)
    }

    public static func decode(_ data: Data) throws -> BackupArchive {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        guard let archive = try? decoder.decode(BackupArchive.self, from: data), archive.format == format else {
            throw AgentError(.configuration, "not a \(format) file")
        }
        return archive
    }
}
