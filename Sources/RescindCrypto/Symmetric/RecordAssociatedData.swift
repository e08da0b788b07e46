#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The associated data that binds an encrypted record to its identity and key version.
///
/// Layout (37 bytes, fixed length so the encoding is unambiguous):
/// `"rescind/record/v1"` (17 ASCII bytes) ‖ record id (16 bytes, RFC 4122 byte order) ‖
/// FMK version (4 bytes, big-endian).
///
/// Sealing with it means a ciphertext moved to another record's row, or replayed under another
/// FMK version, fails to open instead of decrypting as the wrong record.
public enum RecordAssociatedData {
    /// Domain label; a new layout gets a new label.
    public static let label: [UInt8] = Array("rescind/record/v1".utf8)
    public static let byteCount = 17 + 16 + 4

    public static func make(recordID: UUID, fmkVersion: UInt32) -> [UInt8] {
        var result = label
        result.reserveCapacity(byteCount)
        withUnsafeBytes(of: recordID.uuid) { result.append(contentsOf: $0) }
        withUnsafeBytes(of: fmkVersion.bigEndian) { result.append(contentsOf: $0) }
        return result
    }
}
