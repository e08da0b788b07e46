#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The owner's commitment to one FMK version, carried in its signed key statement:
/// `HMAC-SHA256(key: FMK, message: "rescind.fmk_commitment.v1" ‖ family member id (16 bytes)
/// ‖ version (4 bytes, big-endian))`.
///
/// A holder that unwrapped an FMK recomputes it and compares: a key the owner never issued
/// (one a compromised server wrapped itself) does not match. HMAC under the key reveals
/// nothing about it to whoever reads the statement.
public enum FMKCommitment {
    public static let byteCount = HMACSHA256.byteCount
    static let domain = Array("rescind.fmk_commitment.v1".utf8)

    public static func commit(_ fmk: SecretKey, familyMemberID: UUID, version: UInt32) -> [UInt8] {
        HMACSHA256.authenticate(message(familyMemberID: familyMemberID, version: version), key: fmk)
    }

    /// Whether `fmk` is the key `commitment` commits to (compared in constant time).
    public static func matches(_ commitment: [UInt8], fmk: SecretKey, familyMemberID: UUID, version: UInt32) -> Bool {
        let expected = commit(fmk, familyMemberID: familyMemberID, version: version)
        guard commitment.count == expected.count else { return false }
        return zip(commitment, expected).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    static func message(familyMemberID: UUID, version: UInt32) -> [UInt8] {
        let id = familyMemberID.uuid
        let idBytes: [UInt8] = [
            id.0, id.1, id.2, id.3, id.4, id.5, id.6, id.7, id.8, id.9, id.10, id.11, id.12, id.13, id.14, id.15,
        ]
        let versionBytes: [UInt8] = [UInt8(version >> 24), UInt8((version >> 16) & 0xff), UInt8((version >> 8) & 0xff), UInt8(version & 0xff)]
        return domain + idBytes + versionBytes
    }
}
