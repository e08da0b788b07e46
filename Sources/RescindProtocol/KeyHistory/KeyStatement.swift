import Foundation
import RescindMacros

/// One link of a family member's key history, signed by its owner's Ed25519 identity key: who
/// holds which FMK version after it, and a commitment to that FMK.
///
/// The grant service stores and serves the chain but holds no owner key, so it cannot make one;
/// every client and agent verifies the chain up to the version it was handed (`KeyHistoryVerifier`).
/// `seq` counts statements from 1 per family member (several can share one FMK version:
/// `grant`, `transfer`, `adopt`, `rekey` keep it; `revoke` and `rotate` move it one up; `create` is v1).
public struct KeyStatement: Codable, Sendable, Equatable {
    public static let schema = "rescind.key_statement.v1"

    public enum Kind: String, Codable, Sendable, CaseIterable {
        /// v1: the owner's self-wrapped copy.
        case create
        /// Same version, one holder more (a grant or a re-grant).
        case grant
        /// Version + 1, everyone who keeps access re-wrapped, `revoked_user_id` left out.
        case revoke
        /// Version + 1 revoking nobody: exactly the holders of the version before, each re-wrapped
        /// (the owner's stolen device held the old FMK; every record is re-encrypted under the new one).
        case rotate
        /// The owner names `new_owner` (user and identity key): later statements are that key's.
        case transfer
        /// A new owner's own self-wrapped copy replaces the one it was granted (signed by it).
        case adopt
        /// The owner's identity rotation: signed by the old key, naming the new one in
        /// `new_owner`, with the owner's copy re-wrapped under the new master key.
        case rekey
    }

    /// A user holding the current version after the statement.
    @MemberwiseInit
    public struct Holder: Codable, Sendable, Equatable {
        public var userID: UUID
        public var wrapping: KeyWrapping
        /// SHA-256 of the holder's X25519 public key the copy was wrapped to (a self-wrapped
        /// copy names the owner's own key).
        public var agreementKeyFingerprint: Data
        /// SHA-256 of the exact wrapped bytes stored for this holder.
        public var wrappedFMKHash: Data
    }

    /// The shortest security delay a verifier accepts between a change of owner being signed and
    /// it taking effect — a `transfer`'s `not_before`, a `rekey`'s identity rotation — without the
    /// owner's recovery key, whatever the deployment's own (longer) delay.
    public static let minimumDelay: TimeInterval = 3600

    /// How far apart the clocks of honest devices and services may be: a statement's `issued_at`
    /// from the service's clock when received, a `not_before` ahead of a verifier's clock and
    /// still counted as passed. Seconds in practice, never near the delay's hour.
    public static let clockTolerance: TimeInterval = 300

    /// The owner a `transfer` hands over to, or the owner's new key in a `rekey`.
    @MemberwiseInit
    public struct NewOwner: Codable, Sendable, Equatable {
        public var userID: UUID
        public var identityPublicKey: Data
    }

    public var familyMemberID: UUID
    public var seq: Int
    public var kind: Kind
    public var fmkVersion: Int
    /// `SignedKeyStatement.hash` of statement `seq - 1`; absent for seq 1.
    public var previousHash: Data?
    public var ownerUserID: UUID
    /// The Ed25519 key that signs this statement.
    public var signerIdentityKey: Data
    /// Sorted by user id; each user at most once.
    public var holders: [Holder]
    public var revokedUserID: UUID?
    public var newOwner: NewOwner?
    /// `FMKCommitment` of the FMK at `fmk_version`.
    public var fmkCommitment: Data
    /// Millisecond precision (the canonical form).
    public var issuedAt: Date
    /// A `transfer` only: the change takes effect no earlier than this, at least
    /// `minimumDelay` after `issuedAt`, unless the owner's recovery key signed it too. Every
    /// verifier holds it to its own clock, so a grant service that applies a pending transfer
    /// early is refused by every client, whatever the service says about time.
    public var notBefore: Date?
    /// `create` and `adopt` only: the owner's recovery public key (Ed25519), the one key whose
    /// signature makes a later `transfer` take effect at once.
    public var recoveryPublicKey: Data?

    public init(
        familyMemberID: UUID, seq: Int, kind: Kind, fmkVersion: Int, previousHash: Data?, ownerUserID: UUID,
        signerIdentityKey: Data, holders: [Holder], revokedUserID: UUID? = nil, newOwner: NewOwner? = nil,
        fmkCommitment: Data, issuedAt: Date, notBefore: Date? = nil, recoveryPublicKey: Data? = nil
    ) {
        self.familyMemberID = familyMemberID
        self.seq = seq
        self.kind = kind
        self.fmkVersion = fmkVersion
        self.previousHash = previousHash
        self.ownerUserID = ownerUserID
        self.signerIdentityKey = signerIdentityKey
        self.holders = holders.sorted { $0.userID.uuidString < $1.userID.uuidString }
        self.revokedUserID = revokedUserID
        self.newOwner = newOwner
        self.fmkCommitment = fmkCommitment
        self.issuedAt = Timestamp.truncated(issuedAt)
        self.notBefore = notBefore.map(Timestamp.truncated)
        self.recoveryPublicKey = recoveryPublicKey
    }


    /// What the signer signs: the domain label, a newline, the canonical JSON of the statement.
    public func signingInput() throws -> [UInt8] {
        Array("\(Self.schema)\n".utf8) + [UInt8](try CanonicalJSON.encode(self))
    }

    public func holder(_ userID: UUID) -> Holder? { holders.first { $0.userID == userID } }
}

/// A key statement and its owner's signature, as stored and served.
@MemberwiseInit
public struct SignedKeyStatement: Codable, Sendable, Equatable {
    public var statement: KeyStatement
    public var signature: Data
    /// A `rekey` only: the new owner key's signature over the same signing input. The old key
    /// alone cannot move a family member to a new key: a thief still holding it could otherwise
    /// name the owner's new key with a self copy of its own making, which nobody can open.
    public var newOwnerSignature: Data? = nil
    /// A `transfer` only: the owner's recovery key's signature over the same signing input,
    /// which makes the transfer take effect at once (without it, not before `not_before`).
    /// Outside the statement's hash, like the other signatures but the owner's.
    public var recoverySignature: Data? = nil
    /// A `rekey` only, as served: the owner's identity rotation to the key it names, which the
    /// service keeps apart and attaches. A verifier follows the rekey only once the rotation is
    /// `minimumDelay` old by its own clock, or at once when the owner's recovery key signed the
    /// rotation — so a service that applies a thief's rotation early moves no family member.
    public var rotation: IdentityRotation? = nil
    /// A `transfer` only: certified devices of the owner agreeing to it (`DeviceApproval`), the one
    /// that began it and one that approved it. Two whose keys differ, certified by the recovery key
    /// the history names, make the transfer take effect at once, as that key's own signature does.
    /// Outside the statement's hash.
    public var deviceApprovals: [DeviceApproval]? = nil
}

/// A family member's statements after a known sequence number, oldest first.
@MemberwiseInit
public struct KeyStatementList: Codable, Sendable, Equatable {
    public var familyMemberID: UUID
    public var statements: [SignedKeyStatement]
}
