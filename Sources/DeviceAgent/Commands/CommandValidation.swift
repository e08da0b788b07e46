import Foundation
import RescindCrypto
import RescindProtocol

/// What the agent makes of one message on `device_commands`, before anything is stored.
///
/// Every agent reads the whole topic (one consumer group per device), so most messages are
/// for other devices: those keyed to another device are skipped unread. A message keyed to
/// this device is acted on only if it is a well-formed `DeviceCommand` envelope, signed by the
/// pinned grant-service key as `grant-service`, addressed to this device in its signed payload,
/// and names a positive FMK version.
enum CommandValidation: Equatable, Sendable {
    case accepted(DeviceCommand)
    /// Keyed to another device: not ours to judge.
    case ignored
    case rejected(Rejection)

    /// Why a message was refused; `rawValue` is the counter name and the log reason.
    enum Rejection: String, Sendable, CaseIterable {
        case malformed
        case unexpectedSchema = "unexpected_schema"
        case badSignature = "bad_signature"
        case unsignedContent = "unsigned_content"
        case unknownSigner = "unknown_signer"
        case misaddressed
        case invalidVersion = "invalid_version"
        /// A field outside `MessageLimits`.
        case invalidField = "invalid_field"
        /// Larger than any genuine command (`maxEnvelopeBytes`), refused before decoding.
        case oversized
        /// Genuine as far as could be checked, but taking it in failed for a reason that
        /// retrying does not change (`CommandFailure`).
        case unprocessable
    }

    static let trustedSigner = "grant-service"
    /// A genuine command or re-issue envelope is under 1 KiB; anything larger is junk.
    static let maxEnvelopeBytes = 16 * 1024

    static func validate(key: Data?, value: Data?, deviceID: UUID, serviceKey: Ed25519.PublicKey) -> CommandValidation {
        if let key, String(decoding: key, as: UTF8.self).lowercased() != deviceID.text {
            return .ignored
        }
        guard let value else { return .rejected(.malformed) }
        let message: SignedMessage<DeviceCommand>
        do {
            message = try SignedMessage<DeviceCommand>.verified(from: value, schema: DeviceCommand.schema, key: serviceKey)
        } catch let error as MessageError {
            return .rejected(Rejection(rawValue: error.code) ?? .malformed)
        } catch {
            return .rejected(.malformed)
        }
        guard message.signer == trustedSigner else { return .rejected(.unknownSigner) }
        guard message.payload.deviceID == deviceID else { return .rejected(.misaddressed) }
        guard message.payload.newFMKVersion >= 1 else { return .rejected(.invalidVersion) }
        return .accepted(message.payload)
    }
}
