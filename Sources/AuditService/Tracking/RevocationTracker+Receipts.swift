import Foundation
import RescindCrypto
import RescindProtocol

/// Which key may sign which ack.
///
/// An answer (`applied`, `already_applied`, `healed`, `failed`) is signed by the device key the
/// revocation event lists for the device, as `device:<uuid>`. A receipt (`delivered`, `not_now`)
/// may also be signed by the device's receipt key, as `device:<uuid>/receipts`, when it carries
/// the device key's certificate of that key (`ReceiptKeyCertificate`): a locked agent holds no
/// device key, and a thief who copied its data directory holds the receipt key. So the receipt
/// key is accepted for receipts only; used for an answer, the message is refused
/// (`receipt_key_for_answer`) and nothing changes.
extension RevocationTracker {
    /// `device:<uuid>`, or `device:<uuid>/receipts` for an ack that carries a receipt certificate.
    static func expectedSigner(of ack: DeviceAck) -> String {
        ack.receiptCertificate == nil
            ? ReceiptKeyCertificate.deviceSigner(ack.deviceID) : ReceiptKeyCertificate.receiptSigner(ack.deviceID)
    }

    /// Checks the ack's signature with `deviceKey`, or, for one that carries a receipt
    /// certificate, the certificate with `deviceKey` and the ack with the certified receipt key,
    /// which may sign receipts only.
    /// - Returns: `nil` when it verifies; otherwise the rejection code: `bad_signature`, a
    ///   `ReceiptCertificateError` code, or `receipt_key_for_answer`.
    static func signatureRefusal(of message: SignedMessage<DeviceAck>, deviceKey: Ed25519.PublicKey) -> String? {
        let ack = message.payload
        guard let certificate = ack.receiptCertificate else {
            return (try? message.verify(key: deviceKey)) == nil ? MessageError.badSignature.code : nil
        }
        let receiptKey: Ed25519.PublicKey
        do {
            receiptKey = try certificate.receiptKey(of: ack.deviceID, deviceKey: deviceKey)
        } catch {
            return (error as? ReceiptCertificateError ?? .malformed).rawValue
        }
        guard (try? message.verify(key: receiptKey)) != nil else { return MessageError.badSignature.code }
        guard !ack.outcome.isFinal else { return "receipt_key_for_answer" }
        return nil
    }
}
