import Foundation
import RescindCrypto
import RescindProtocol

/// Builds the signed `device_acks` message for a command: signed by this device's key as
/// `device:<uuid>`, so the audit service can check it against the key the grant service
/// listed for this device. Acks are signed when they are owed (inside the transaction
/// that records the outcome), so publishing them later needs no key. A locked agent cannot
/// sign: what it did is kept as a sealed draft (`SealedCommand.Result`) and signed at unlock.
struct AckSigner: Sendable {
    let deviceID: UUID
    let deviceKey: Ed25519.PrivateKey

    var signer: String { "device:\(deviceID.text)" }

    func ack(
        for command: DeviceCommand, outcome: DeviceAck.Outcome, effect: ChangeEffect, duration: Duration, error: String?,
        ackedAt: Date = Date(), originalCommandID: UUID? = nil, attempt: Int? = nil
    ) throws -> (ack: DeviceAck, message: Data) {
        let ack = DeviceAck(
            ackID: UUID(), commandID: command.commandID, eventID: command.eventID, deviceID: deviceID,
            action: command.action, outcome: outcome, recordsProcessed: effect.recordsProcessed,
            fmkVersion: effect.fmkVersion, durationMs: min(max(duration.wholeMilliseconds, 0), MessageLimits.maxInteger),
            error: error.map { MessageLimits.safeText($0, maxLength: MessageLimits.errorLength) }, ackedAt: ackedAt,
            originalCommandID: originalCommandID, attempt: attempt)
        let message = try SignedMessage(schema: DeviceAck.schema, signer: signer, payload: ack, key: deviceKey)
        return (ack, try message.encoded())
    }
}
