import Foundation
import Logging
import RescindCrypto
import RescindKafka
import RescindObservability
import RescindProtocol

/// Re-issued commands (`CommandReissue`, signed by the audit service).
///
/// A re-issue carries no instruction: the agent verifies it with the pinned audit-service key
/// (`AgentConfiguration.auditServiceKey`; without one, re-issues are refused), checks it is
/// addressed to this device, and queues the grant service's command of that revocation that it
/// already holds — verified with the grant-service key when it arrived — again under the
/// re-issue id. Its ack names the re-issue id, the original command and the attempt. A device
/// that does not hold the command fetches it at its next check-in; a locked device lets the
/// re-issue pass (the audit service sends another after its backoff, and the sealed original
/// runs at the unlock anyway).
extension AgentEngine {
    /// What the agent makes of a signed message other than a command (a re-issue, a
    /// governance notice) keyed to this device.
    enum Validated<Payload: Equatable & Sendable>: Equatable, Sendable {
        case accepted(Payload)
        case rejected(CommandValidation.Rejection)
    }

    /// Called under `mode` for a message keyed to this device whose schema is a re-issue's.
    func receiveReissue(_ message: KafkaMessage) async throws -> Receipt {
        let reissue: CommandReissue
        switch Self.validateReissue(message.value, deviceID: deviceID, auditKey: configuration.auditServiceKey) {
        case .rejected(let reason):
            return try await reject(reason, message, what: "command re-issue")
        case .accepted(let payload):
            reissue = payload
        }
        var logger = logger
        logger[metadataKey: LogKey.command] = "\(reissue.reissueID.text)"
        guard keyRing.keys != nil else {
            logger.info("command re-issue passed over while locked", metadata: [LogKey.attempt: "\(reissue.attempt)"])
            return .ignored
        }
        // A traced re-issue's trace (the audit service's `command reissued`) continues here.
        let received = Self.receivedSpan(message)
        defer { received?.end() }
        switch try await store.enqueue(reissue, receipts: receipts, trace: received?.context.traceContext) {
        case .queued(let command):
            acksOwed.signal()
            logger.notice(
                "command re-issued: carrying out the revocation's command again",
                metadata: [
                    LogKey.attempt: "\(reissue.attempt)", LogKey.action: "\(command.action.rawValue)",
                    LogKey.familyMemberID: "\(command.familyMemberID.text)",
                ])
            metrics.received(command.action, locked: false)
            commandsQueued.signal()
            return .stored(commandID: reissue.reissueID)
        case .duplicate:
            return .stored(commandID: reissue.reissueID)
        case .notHeld:
            logger.notice("command re-issued for a revocation whose command this device does not hold; fetched at the next check-in")
            return .ignored
        }
    }

    /// Verifies a re-issue: the audit service's signature with the pinned key, its signer name,
    /// this device as addressee, its limits.
    static func validateReissue(
        _ value: Data?, deviceID: UUID, auditKey: Ed25519.PublicKey?
    ) -> Validated<CommandReissue> {
        guard let auditKey else { return .rejected(.unknownSigner) }
        return validateAddressed(
            value, schema: CommandReissue.schema, signer: CommandReissue.signer, key: auditKey, to: deviceID, addressee: { $0.deviceID })
    }

    /// Verifies an envelope of a kind other than a command that is addressed to one device: the
    /// signature with `key`, the signer name, `deviceID` as the signed addressee, the limits.
    static func validateAddressed<Payload: Codable & Sendable & Equatable>(
        _ value: Data?, schema: String, signer: String, key: Ed25519.PublicKey, to deviceID: UUID, addressee: (Payload) -> UUID?
    ) -> Validated<Payload> {
        guard let value else { return .rejected(.malformed) }
        let message: SignedMessage<Payload>
        do {
            message = try SignedMessage<Payload>.verified(from: value, schema: schema, key: key)
        } catch let error as MessageError {
            return .rejected(CommandValidation.Rejection(rawValue: error.code) ?? .malformed)
        } catch {
            return .rejected(.malformed)
        }
        guard message.signer == signer else { return .rejected(.unknownSigner) }
        guard addressee(message.payload) == deviceID else { return .rejected(.misaddressed) }
        return .accepted(message.payload)
    }
}
