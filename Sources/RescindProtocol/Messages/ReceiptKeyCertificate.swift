import Foundation
import RescindCrypto
import RescindMacros

/// A device's certificate for its receipt key: the device's own Ed25519 key (the one the grant
/// service lists for it, which signs its answers) says that `receiptPublicKey` may sign this
/// device's receipts, and nothing else.
///
/// A locked agent holds no device key (its keystore is sealed), yet it should still say that a
/// command reached it (`not_now`). So while unlocked it makes a receipt key, kept in the clear in
/// its data directory, and certifies it. The certificate travels inside every receipt it signs
/// (`DeviceAck.receiptCertificate`); the audit service verifies it against the device key of the
/// revocation and accepts the receipt key for `delivered` and `not_now` only. A thief who copies
/// the data directory gets the receipt key and can forge receipts, which move no device to a done
/// state and complete nothing; an answer (`applied`, `failed`, `healed`, …) still needs the device
/// key. Sent as `SignedMessage<ReceiptKeyCertificate>` (schema `rescind.receipt_key_certificate.v1`,
/// signer `device:<device id>`).
@MemberwiseInit
public struct ReceiptKeyCertificate: Codable, Sendable, Equatable {
    public static let schema = "rescind.receipt_key_certificate.v1"

    /// What a receipt key may sign: receipts only.
    public enum Purpose: String, Codable, Sendable {
        case receiptsOnly = "receipts_only"
    }

    public var deviceID: UUID
    /// The receipt key's Ed25519 public key (32 bytes).
    public var receiptPublicKey: Data
    public var purpose: Purpose = .receiptsOnly
    public var issuedAt: Date


    /// The signer of a device's answers and of its certificates: `device:<uuid>`.
    public static func deviceSigner(_ deviceID: UUID) -> String {
        "device:\(deviceID.uuidString.lowercased())"
    }

    /// The signer named by an envelope its receipt key signed: `device:<uuid>/receipts`, so that
    /// the signed bytes themselves say which of the device's keys signed them.
    public static func receiptSigner(_ deviceID: UUID) -> String {
        deviceSigner(deviceID) + "/receipts"
    }

    /// The device key's certificate of `receiptKey`, dated now.
    public static func issue(
        for receiptKey: Ed25519.PublicKey, deviceID: UUID, deviceKey: Ed25519.PrivateKey, at date: Date = Date()
    ) throws -> SignedMessage<ReceiptKeyCertificate> {
        try SignedMessage(
            schema: schema, signer: deviceSigner(deviceID),
            payload: ReceiptKeyCertificate(
                deviceID: deviceID, receiptPublicKey: Data(receiptKey.rawRepresentation), issuedAt: Timestamp.truncated(date)),
            key: deviceKey)
    }
}

/// Why a receipt key's certificate is refused (the audit service's rejection reasons).
public enum ReceiptCertificateError: String, Error, Sendable, Equatable, CustomStringConvertible {
    /// Not a certificate envelope, or signed in another device's name.
    case malformed = "receipt_certificate_malformed"
    /// It names another device than the receipt it came with.
    case otherDevice = "receipt_certificate_other_device"
    /// The device key does not verify it.
    case badSignature = "receipt_certificate_bad_signature"

    public var description: String { rawValue }
}

extension SignedMessage where Payload == ReceiptKeyCertificate {
    /// The receipt public key this certificate vouches for, once it is checked to be `deviceID`'s
    /// and signed by `deviceKey` (the key the verifier already trusts for that device).
    /// - Throws: `ReceiptCertificateError`.
    public func receiptKey(of deviceID: UUID, deviceKey: Ed25519.PublicKey) throws -> Ed25519.PublicKey {
        guard schema == ReceiptKeyCertificate.schema, signer == ReceiptKeyCertificate.deviceSigner(payload.deviceID) else {
            throw ReceiptCertificateError.malformed
        }
        guard payload.deviceID == deviceID else { throw ReceiptCertificateError.otherDevice }
        guard (try? verify(key: deviceKey)) != nil else { throw ReceiptCertificateError.badSignature }
        guard let key = try? Ed25519.PublicKey(rawRepresentation: [UInt8](payload.receiptPublicKey)) else {
            throw ReceiptCertificateError.malformed
        }
        return key
    }
}

extension ReceiptKeyCertificate: BoundaryValidated {
    public func validate() throws(MessageError) {
        let check = FieldCheck("receipt_certificate.")
        try check.bytes(receiptPublicKey, "receipt_public_key", count: Ed25519.publicKeyByteCount)
        try check.timestamp(issuedAt, "issued_at")
    }
}
