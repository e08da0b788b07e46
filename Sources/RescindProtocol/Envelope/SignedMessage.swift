import Foundation
import RescindCrypto

/// A Kafka message body: a typed payload with its schema name and a detached
/// Ed25519 signature over the payload's canonical JSON.
///
/// The signature also covers the schema and the signer, so a valid message of
/// one type can never be replayed as another, nor attributed to someone else.
public struct SignedMessage<Payload: Codable & Sendable>: Codable, Sendable {
    /// Names the payload type and its version (e.g. `rescind.device_command.v1`).
    public var schema: String
    /// Who signed: `grant-service`, `audit-service` or `device:<uuid>`. Informational for
    /// routing; verification always uses a key the verifier already trusts.
    public var signer: String
    public var signature: Data
    public var payload: Payload


    /// Signs `payload` as `signer`.
    public init(schema: String, signer: String, payload: Payload, key: Ed25519.PrivateKey) throws {
        self.schema = schema
        self.signer = signer
        self.payload = payload
        let input = try Self.signingInput(schema: schema, signer: signer, payload: payload)
        self.signature = Data(key.signature(for: input))
    }

    /// The bytes to put on the wire (canonical JSON of the whole envelope).
    public func encoded() throws -> Data {
        try CanonicalJSON.encode(self)
    }

    /// Decodes an envelope and checks its schema and its signature against `key`.
    ///
    /// - Throws: `MessageError` when the bytes are not such an envelope, the schema differs,
    ///   or the signature does not verify. Never returns an unverified payload.
    public static func verified(
        from bytes: Data, schema expected: String, key: Ed25519.PublicKey
    ) throws -> SignedMessage<Payload> {
        let message = try decode(bytes, schema: expected)
        try message.verify(key: key)
        return message
    }

    /// Decodes without verifying, for callers that must first find the key
    /// (e.g. from the signer field); `verify(key:)` must follow before any use.
    ///
    /// - Throws: `MessageError.unsignedContent` when the payload carries anything its
    ///   canonical form (the signed bytes) does not: unknown fields, other encodings;
    ///   `MessageError.invalidField` when the signer or a field of a `BoundaryValidated`
    ///   payload is outside `MessageLimits`.
    public static func decode(_ bytes: Data, schema expected: String) throws -> SignedMessage<Payload> {
        let message: SignedMessage<Payload>
        let received: Any?
        do {
            message = try CanonicalJSON.decode(SignedMessage<Payload>.self, from: bytes)
            received = (try JSONSerialization.jsonObject(with: bytes) as? [String: Any])?["payload"]
        } catch {
            throw MessageError.malformed
        }
        guard message.schema == expected else { throw MessageError.unexpectedSchema(message.schema) }
        // Decoding drops what the payload type does not know; the signature covers only
        // what it knows. Refuse the difference rather than let unsigned content ride along.
        guard let received, CanonicalJSON.holdsExactly(received, message.payload) else {
            throw MessageError.unsignedContent
        }
        // Every field within `MessageLimits` before any caller can store or act on it.
        guard MessageLimits.isSafeText(message.signer, maxLength: MessageLimits.signerLength) else {
            throw MessageError.invalidField("signer")
        }
        if let payload = message.payload as? any BoundaryValidated { try payload.validate() }
        return message
    }

    /// - Throws: `MessageError.badSignature` unless `key` signed exactly this schema, signer and payload.
    public func verify(key: Ed25519.PublicKey) throws {
        let input = try Self.signingInput(schema: schema, signer: signer, payload: payload)
        guard key.isValidSignature([UInt8](signature), for: input) else { throw MessageError.badSignature }
    }

    static func signingInput(schema: String, signer: String, payload: Payload) throws -> [UInt8] {
        var input = Array("rescind-signed-message-v1\n\(schema)\n\(signer)\n".utf8)
        input += try CanonicalJSON.encode(payload)
        return input
    }
}

extension SignedMessage: Equatable where Payload: Equatable {}

/// Why a message was refused. Descriptions never include the message contents.
public enum MessageError: Error, Equatable, Sendable, CustomStringConvertible {
    case malformed
    case unexpectedSchema(String)
    case badSignature
    case unsignedContent
    case unknownSigner(String)
    /// A field is outside `MessageLimits` (too long, out of range, control characters).
    case invalidField(String)

    public var code: String {
        switch self {
        case .malformed: "malformed"
        case .unexpectedSchema: "unexpected_schema"
        case .badSignature: "bad_signature"
        case .unsignedContent: "unsigned_content"
        case .unknownSigner: "unknown_signer"
        case .invalidField: "invalid_field"
        }
    }

    public var description: String {
        switch self {
        case .malformed: "message is not a valid signed envelope"
        case .unexpectedSchema(let schema): "unexpected schema \(MessageLimits.escaped(schema, maxLength: 80))"
        case .badSignature: "signature does not verify"
        case .unsignedContent: "message carries content its signature does not cover"
        case .unknownSigner(let signer): "unknown signer \(MessageLimits.escaped(signer, maxLength: 80))"
        case .invalidField(let field): "field \(field) is outside its limits"
        }
    }
}

/// What an envelope says about itself before anything is trusted.
public enum SignedEnvelope {
    /// The schema an envelope claims (several kinds share a topic: commands, re-issues and
    /// governance notices on `device_commands`; acks and violation reports on `device_acks`), to
    /// route it to its verification; `nil` when the bytes are not a JSON object naming one, or
    /// are larger than any envelope (1 MiB).
    public static func claimedSchema(_ bytes: Data?) -> String? {
        guard let bytes, bytes.count <= 1 << 20,
            let object = try? JSONSerialization.jsonObject(with: bytes) as? [String: Any]
        else { return nil }
        return object["schema"] as? String
    }
}
