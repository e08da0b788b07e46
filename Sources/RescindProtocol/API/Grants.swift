import Foundation

/// The caller's wrapped FMK and what is needed to unwrap it.
public struct WrappedKeyResponse: Codable, Sendable, Equatable {
    public var familyMemberID: UUID
    public var fmkVersion: Int
    public var wrapping: KeyWrapping
    public var wrappedFMK: Data
    public var grantedByUserID: UUID
    public var granterAgreementPublicKey: Data?
    /// The owner-signed key statements after the `known_seq` the caller sent (all of them
    /// without it), oldest first: what the caller verifies this key against.
    public var keyStatements: [SignedKeyStatement]?

    public init(
        familyMemberID: UUID, fmkVersion: Int, wrapping: KeyWrapping, wrappedFMK: Data, grantedByUserID: UUID,
        granterAgreementPublicKey: Data? = nil, keyStatements: [SignedKeyStatement]? = nil
    ) {
        self.familyMemberID = familyMemberID
        self.fmkVersion = fmkVersion
        self.wrapping = wrapping
        self.wrappedFMK = wrappedFMK
        self.grantedByUserID = grantedByUserID
        self.granterAgreementPublicKey = granterAgreementPublicKey
        self.keyStatements = keyStatements
    }
}

/// Replaces the caller's own wrapped copy at the current version.
public struct ReplaceKeyRequest: Codable, Sendable, Equatable {
    public var fmkVersion: Int
    public var wrapping: KeyWrapping
    public var wrappedFMK: Data
    public var granterAgreementPublicKey: Data?
    /// Required for a self-wrapped copy (only the owner's): the owner's signed `adopt` (after a
    /// transfer) or `rekey` (after an identity rotation, signed by the old key and the new) statement. A
    /// grantee's ecdh re-wrap after its own rotation carries none (see `KeyHistoryVerifier`).
    public var statement: SignedKeyStatement?

    public init(
        fmkVersion: Int, wrapping: KeyWrapping, wrappedFMK: Data, granterAgreementPublicKey: Data? = nil,
        statement: SignedKeyStatement? = nil
    ) {
        self.fmkVersion = fmkVersion
        self.wrapping = wrapping
        self.wrappedFMK = wrappedFMK
        self.granterAgreementPublicKey = granterAgreementPublicKey
        self.statement = statement
    }
}

/// Grants access with an FMK wrapped from the owner's X25519 key to the grantee's.
public struct GrantRequest: Codable, Sendable, Equatable {
    public var granteeUserID: UUID
    public var fmkVersion: Int
    public var wrappedFMK: Data
    /// The grantee's X25519 key the FMK was wrapped to: refused unless it is their current
    /// key (409 `stale_identity_key`), so nothing is ever wrapped to a rotated-away key.
    public var granteeAgreementPublicKey: Data
    /// The owner's signed `grant` statement: the holders of the current version plus the grantee.
    public var statement: SignedKeyStatement?

    public init(
        granteeUserID: UUID, fmkVersion: Int, wrappedFMK: Data, granteeAgreementPublicKey: Data,
        statement: SignedKeyStatement? = nil
    ) {
        self.granteeUserID = granteeUserID
        self.fmkVersion = fmkVersion
        self.wrappedFMK = wrappedFMK
        self.granteeAgreementPublicKey = granteeAgreementPublicKey
        self.statement = statement
    }
}

/// One access grant (wrapped key omitted).
public struct GrantResponse: Codable, Sendable, Equatable {
    public var grantID: UUID
    public var familyMemberID: UUID
    public var granteeUserID: UUID
    public var grantedByUserID: UUID
    public var wrapping: KeyWrapping
    public var fmkVersion: Int
    public var createdAt: Date
    public var revokedAt: Date?

    public init(grantID: UUID, familyMemberID: UUID, granteeUserID: UUID, grantedByUserID: UUID, wrapping: KeyWrapping, fmkVersion: Int, createdAt: Date, revokedAt: Date? = nil) {
        self.grantID = grantID
        self.familyMemberID = familyMemberID
        self.granteeUserID = granteeUserID
        self.grantedByUserID = grantedByUserID
        self.wrapping = wrapping
        self.fmkVersion = fmkVersion
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }
}

/// Who has (or recently had) access.
public struct GrantList: Codable, Sendable, Equatable {
    public var grants: [GrantResponse]

    public init(grants: [GrantResponse]) {
        self.grants = grants
    }
}
