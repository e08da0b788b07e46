import Foundation
import RescindClient
import RescindCrypto
import RescindProtocol

/// The device's receipt key and its certificate, in `receipt-key.json` in the data directory
/// (0600, outside the keystore, so readable while the agent is locked).
///
/// Made and certified by the device key while the agent is unlocked; read as it is while locked.
/// Whoever can read the data directory can sign receipts with it, and nothing more: the audit
/// service accepts it for `delivered` and `not_now` only (`ReceiptKeyCertificate`).
struct ReceiptKeyFile: Codable {
    static let fileName = "receipt-key.json"
    static let format = "rescind-receipt-key-v1"

    var format: String
    /// The receipt key's 32-byte Ed25519 seed.
    var seed: Data
    var certificate: SignedMessage<ReceiptKeyCertificate>

    static func path(in dataDirectory: String) -> String { dataDirectory + "/" + fileName }

    /// The receipt signer kept in `dataDirectory`, if there is one for `deviceID` whose
    /// certificate names the key it holds; `nil` otherwise (a locked agent then sends no receipts).
    static func load(dataDirectory: String, deviceID: UUID) -> ReceiptSigner? {
        let path = path(in: dataDirectory)
        guard FileManager.default.fileExists(atPath: path),
            let bytes = try? SecureFiles.readOwnerOnly(path, kind: "receipt key"),
            let file = try? CanonicalJSON.decode(ReceiptKeyFile.self, from: Data(bytes)), file.format == format,
            file.certificate.payload.deviceID == deviceID
        else { return nil }
        var seed = [UInt8](file.seed)
        guard let key = try? Ed25519.PrivateKey(seed: &seed),
            Data(key.publicKey.rawRepresentation) == file.certificate.payload.receiptPublicKey
        else { return nil }
        return ReceiptSigner(deviceID: deviceID, key: key, certificate: file.certificate)
    }

    /// The receipt signer in `dataDirectory` when its certificate verifies with `deviceKey`;
    /// otherwise a new receipt key, certified by `deviceKey` now and written there.
    /// - Throws: `AgentError.storage` when the file cannot be written.
    static func ensure(dataDirectory: String, deviceID: UUID, deviceKey: Ed25519.PrivateKey) throws -> ReceiptSigner {
        if let signer = load(dataDirectory: dataDirectory, deviceID: deviceID),
            (try? signer.certificate.receiptKey(of: deviceID, deviceKey: deviceKey.publicKey)) != nil
        {
            return signer
        }
        var seed = SecureRandom.bytes(count: Ed25519.seedByteCount)
        let file = Data(seed)
        let key = try Ed25519.PrivateKey(seed: &seed)
        let certificate = try ReceiptKeyCertificate.issue(for: key.publicKey, deviceID: deviceID, deviceKey: deviceKey)
        try SecureFiles.writeOwnerOnly(
            try CanonicalJSON.encode(ReceiptKeyFile(format: format, seed: file, certificate: certificate)),
            to: path(in: dataDirectory))
        return ReceiptSigner(deviceID: deviceID, key: key, certificate: certificate)
    }
}
