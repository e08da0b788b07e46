import Foundation
import RescindClient
import RescindCrypto

/// At-rest encryption of the record cache: an extra AES-256-GCM layer, under the device's
/// database key (`Keystore.atRestKey`, wrapped under the KEK), around each cached record
/// exactly as the grant service stores it (nonce ‖ ciphertext ‖ tag under the FMK).
///
/// Records are never plaintext on the device; what the layer adds is that the cache file
/// alone is useless even to someone holding the FMK (e.g. from another device or the
/// service), and its bytes no longer match the service's copy. Off by default; switched
/// with `rescind-agent at-rest on|off`, which migrates every record in one transaction.
/// Erasure needs no layer key: it overwrites whatever bytes are stored.
struct AtRestLayer: Sendable {
    let key: SecretKey

    /// The stored triple for `inner`, bound to the record id.
    func seal(nonce: Data, ciphertext: Data, tag: Data, recordID: UUID) throws -> (nonce: Data, ciphertext: Data, tag: Data) {
        let inner = [UInt8](nonce) + [UInt8](ciphertext) + [UInt8](tag)
        let box = try AESGCMCipher(key: key).seal(inner, authenticating: Self.associatedData(recordID))
        return (Data(box.nonce), Data(box.ciphertext), Data(box.tag))
    }

    /// The grant service's triple back from a stored one.
    /// - Throws: `AgentError.storage` when the row does not open under this key.
    func open(nonce: Data, ciphertext: Data, tag: Data, recordID: UUID) throws -> (nonce: Data, ciphertext: Data, tag: Data) {
        guard let box = try? AESGCM.SealedBox(nonce: [UInt8](nonce), ciphertext: [UInt8](ciphertext), tag: [UInt8](tag)),
            let inner = try? AESGCMCipher(key: key).open(box, authenticating: Self.associatedData(recordID)),
            inner.count >= AESGCM.overheadByteCount
        else { throw AgentError(.storage, "cached record \(recordID.text) does not open under the at-rest key") }
        let tagStart = inner.count - AESGCM.tagByteCount
        return (
            Data(inner[..<AESGCM.nonceByteCount]), Data(inner[AESGCM.nonceByteCount..<tagStart]), Data(inner[tagStart...])
        )
    }

    private static func associatedData(_ recordID: UUID) -> [UInt8] {
        Array("rescind-agent/at-rest/v1/\(recordID.text)".utf8)
    }
}
