import Foundation

extension KeyBackup {
    /// What the recovery key signs: `rescind-key-backup-v1\n` and the canonical JSON of every
    /// field but the signature.
    public func signingInput() throws -> [UInt8] {
        var unsigned = self
        unsigned.signature = Data()
        return Array("rescind-key-backup-v1\n".utf8) + [UInt8](try CanonicalJSON.encode(unsigned))
    }
}
