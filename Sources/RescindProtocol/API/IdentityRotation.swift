import Foundation
import RescindMacros

/// A user's statement that their identity keys are now `identityPublicKey` and
/// `agreementPublicKey` (key-hierarchy ADR, phase 4: key rotation).
///
/// Signed twice: by the previous identity key, which proves the statement comes from the
/// user who held it, and by the new one, which proves the new key's holder agreed. The
/// generation counts rotations from 1 (the keys registered first), so a statement can be
/// used once: replaying it, or one made for an older generation, is refused. The chain of
/// statements lets anyone who pinned an earlier identity key follow the user to the
/// current one.
@MemberwiseInit
public struct IdentityRotationStatement: Codable, Sendable, Equatable {
    public var userID: UUID
    /// The generation these keys start (the first keys are generation 1).
    public var generation: Int
    public var previousIdentityPublicKey: Data
    public var identityPublicKey: Data
    public var agreementPublicKey: Data
    public var issuedAt: Date


    /// What both identity keys sign: the statement, canonically encoded, under its own domain label.
    public func signingInput() throws -> [UInt8] {
        Array("rescind-identity-rotation-v1\n".utf8) + [UInt8](try CanonicalJSON.encode(self))
    }
}

/// A rotation as submitted and as kept: the statement and both signatures.
@MemberwiseInit
public struct IdentityRotation: Codable, Sendable, Equatable {
    public var statement: IdentityRotationStatement
    /// By the previous identity key.
    public var previousKeySignature: Data
    /// By the new identity key.
    public var newKeySignature: Data
    /// The new identity key's `RecoveryKeyBinding` of the user's recovery key, which the rotating
    /// device verified under the previous identity key (or holds as words): kept when the rotation
    /// takes effect with that recovery key still the user's. Not part of the kept history.
    public var recoveryBinding: Data? = nil
    /// The user's recovery key's signature over the statement's signing input, when the recovery
    /// key approved the rotation: the family members the user owns then follow the new key at
    /// once (`KeyHistoryVerifier`); without it, not before `KeyStatement.minimumDelay` after
    /// `issued_at`. Added by the service from the approval; kept with the rotation.
    public var recoverySignature: Data? = nil
    /// Certified devices of the user agreeing to the rotation (`DeviceApproval`): the device that
    /// began it and one that approved it. Two whose keys differ, both certified by the recovery key
    /// a family member's history names, make the rotation as good as the recovery key's signature
    /// for that family member's `rekey` (`isCoSigned`). Kept with the rotation.
    public var deviceApprovals: [DeviceApproval]? = nil
}

/// A user's rotations, oldest first.
@MemberwiseInit
public struct IdentityRotationList: Codable, Sendable, Equatable {
    public var rotations: [IdentityRotation]
}
