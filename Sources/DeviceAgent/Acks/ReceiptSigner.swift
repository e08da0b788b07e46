import Foundation
import RescindCrypto
import RescindProtocol

/// Signs this device's receipts (`delivered`, `not_now`) with its receipt key, as
/// `device:<uuid>/receipts`, each carrying the device key's certificate of that key.
///
/// The receipt key lives outside the keystore (`ReceiptKeyFile`), so a locked agent can still say
/// that a command reached it. It signs receipts and nothing else: answers are signed by the device
/// key (`AckSigner`), and the audit service refuses the receipt key for them.
struct ReceiptSigner: Sendable {
    let deviceID: UUID
    let key: Ed25519.PrivateKey
    let certificate: SignedMessage<ReceiptKeyCertificate>

    /// The receipt for `command`: what the device holds now (`heldVersion`, before acting), dated now.
    /// Its id is derived from the command id and the outcome, so the same receipt made twice
    /// (a command sealed again after a redelivery) is one receipt, in the outbox and at the
    /// audit service.
    func receipt(
        for command: DeviceCommand, _ outcome: DeviceAck.Outcome, heldVersion: Int, originalCommandID: UUID? = nil,
        attempt: Int? = nil, at date: Date = Date()
    ) throws -> (ack: DeviceAck, message: Data) {
        precondition(!outcome.isFinal, "the receipt key signs receipts only")
        let ack = DeviceAck(
            ackID: Self.receiptID(command.commandID, outcome), commandID: command.commandID, eventID: command.eventID,
            deviceID: deviceID, action: command.action, outcome: outcome, recordsProcessed: 0,
            fmkVersion: min(max(heldVersion, 0), MessageLimits.maxInteger), durationMs: 0, error: nil,
            ackedAt: Timestamp.truncated(date), originalCommandID: originalCommandID, attempt: attempt,
            receiptCertificate: certificate)
        let message = try SignedMessage(
            schema: DeviceAck.schema, signer: ReceiptKeyCertificate.receiptSigner(deviceID), payload: ack, key: key)
        return (ack, try message.encoded())
    }

    /// A UUID (version 8) from SHA-256 of the command id and the outcome.
    static func receiptID(_ commandID: UUID, _ outcome: DeviceAck.Outcome) -> UUID {
        var bytes = Array(SHA256.hash(Array("rescind-receipt-v1\n\(commandID.text)\n\(outcome.rawValue)".utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x80
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(uuid: (
            bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
            bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }
}
