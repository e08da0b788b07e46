import Foundation

extension Invitation {
    /// Seven days, as the sharing ADR says.
    public static let maximumLifetime: TimeInterval = 7 * 24 * 3600

    /// What the inviter's identity key signs.
    public func signingInput() throws -> [UInt8] {
        Array("rescind-invitation-v1\n".utf8) + [UInt8](try CanonicalJSON.encode(self))
    }
}

extension InvitationAcceptance {
    /// What both the invitee's identity key and the invitation key sign.
    public func signingInput() throws -> [UInt8] {
        Array("rescind-invitation-acceptance-v1\n".utf8) + [UInt8](try CanonicalJSON.encode(self))
    }
}

extension InvitationResponse {
    public enum Status: String, Codable, Sendable {
        case pending, accepted, expired
    }
}

/// What the owner hands over in person: the invitation's id, the seed of its one-time key and
/// the first 16 bytes of SHA-256 of the inviter's identity key, as
/// `rescind-invite:` + base64url (no padding) of those 64 bytes.
public struct InvitationToken: Sendable, Equatable, CustomStringConvertible {
    public static let prefix = "rescind-invite:"
    public static let fingerprintByteCount = 16

    public var invitationID: UUID
    public var seed: [UInt8]
    public var inviterFingerprint: [UInt8]

    public init(invitationID: UUID, seed: [UInt8], inviterFingerprint: [UInt8]) {
        precondition(seed.count == 32 && inviterFingerprint.count == Self.fingerprintByteCount)
        self.invitationID = invitationID
        self.seed = seed
        self.inviterFingerprint = inviterFingerprint
    }

    public enum ParseError: Error, Equatable, CustomStringConvertible {
        case malformed

        public var description: String {
            "not an invitation: expected \(InvitationToken.prefix) followed by 86 base64url characters"
        }
    }

    /// Parses a token as printed (surrounding whitespace ignored); anything else is refused.
    public init(parsing text: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.hasPrefix(Self.prefix) else { throw ParseError.malformed }
        let body = trimmed.dropFirst(Self.prefix.count)
        guard body.count == 86, body.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
            throw ParseError.malformed
        }
        let base64 = body.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/") + "=="
        guard let bytes = Data(base64Encoded: base64).map(Array.init), bytes.count == 64 else { throw ParseError.malformed }
        let id = bytes[0..<16]
        invitationID = UUID(uuid: (id[0], id[1], id[2], id[3], id[4], id[5], id[6], id[7], id[8], id[9], id[10], id[11], id[12], id[13], id[14], id[15]))
        seed = Array(bytes[16..<48])
        inviterFingerprint = Array(bytes[48..<64])
    }

    public var description: String {
        let uuid = invitationID.uuid
        let id: [UInt8] = [
            uuid.0, uuid.1, uuid.2, uuid.3, uuid.4, uuid.5, uuid.6, uuid.7, uuid.8, uuid.9, uuid.10, uuid.11, uuid.12, uuid.13,
            uuid.14, uuid.15,
        ]
        let text = Data(id + seed + inviterFingerprint).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        return Self.prefix + text
    }
}
