import Foundation
import RescindMacros

/// The caller's wrapped FMK and what is needed to unwrap it.
@MemberwiseInit
public struct WrappedKeyResponse: Codable, Sendable, Equatable {
    public var familyMemberID: UUID
    public var fmkVersion: Int
    public var wrapping: KeyWrapping
    public var wrappedFMK: Data
    public var grantedByUserID: UUID
    public var granterAgreementPublicKey: Data? = nil
    /// The owner-signed key statements after the `known_seq` the caller sent (all of them
    /// without it), oldest first: what the caller verifies this key against.
    public var keyStatements: [SignedKeyStatement]? = nil
}

/// Replaces the caller's own wrapped copy at the current version.
@MemberwiseInit
public struct ReplaceKeyRequest: Codable, Sendable, Equatable {
    public var fmkVersion: Int
    public var wrapping: KeyWrapping
    public var wrappedFMK: Data
    public var granterAgreementPublicKey: Data? = nil
    /// Required for a self-wrapped copy (only the owner's): the owner's signed `adopt` (after a
    /// transfer) or `rekey` (after an identity rotation, signed by the old key and the new) statement. A
    /// grantee's ecdh re-wrap after its own rotation carries none (see `KeyHistoryVerifier`).
    public var statement: SignedKeyStatement? = nil
}

/// Grants access with an FMK wrapped from the owner's X25519 key to the grantee's.
@MemberwiseInit
public struct GrantRequest: Codable, Sendable, Equatable {
    public var granteeUserID: UUID
    public var fmkVersion: Int
    public var wrappedFMK: Data
    /// The grantee's X25519 key the FMK was wrapped to: refused unless it is their current
    /// key (409 `stale_identity_key`), so nothing is ever wrapped to a rotated-away key.
    public var granteeAgreementPublicKey: Data
    /// The owner's signed `grant` statement: the holders of the current version plus the grantee.
    public var statement: SignedKeyStatement? = nil
}

/// One access grant (wrapped key omitted).
@MemberwiseInit
public struct GrantResponse: Codable, Sendable, Equatable {
    public var grantID: UUID
    public var familyMemberID: UUID
    public var granteeUserID: UUID
    public var grantedByUserID: UUID
    public var wrapping: KeyWrapping
    public var fmkVersion: Int
    public var createdAt: Date
    public var revokedAt: Date? = nil
}

/// Who has (or recently had) access.
@MemberwiseInit
public struct GrantList: Codable, Sendable, Equatable {
    public var grants: [GrantResponse]
}
