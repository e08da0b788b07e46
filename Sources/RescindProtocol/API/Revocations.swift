import Foundation
import RescindMacros

/// Starts revoking one user from one family member.
@MemberwiseInit
public struct BeginRevocationRequest: Codable, Sendable, Equatable {
    public var revokedUserID: UUID
    public var reason: String? = nil
}

/// Starts revoking one user from every family member the caller owns.
@MemberwiseInit
public struct BeginUserRevocationRequest: Codable, Sendable, Equatable {
    public var reason: String? = nil
}

/// Starts a rotation that revokes nobody: a new FMK for the same holders, every record
/// re-encrypted (the owner's stolen device held the old FMK). Continued as a revocation.
@MemberwiseInit
public struct BeginRotationRequest: Codable, Sendable, Equatable {
    public var reason: String? = nil
}

/// A revocation in progress: what to re-encrypt, and whom to re-wrap the new FMK for.
@MemberwiseInit
public struct RevocationResponse: Codable, Sendable, Equatable {
    public var revocationID: UUID
    public var familyMemberID: UUID
    /// Nil for a rotation that revokes nobody (`remainingGrantees` is then every holder).
    public var revokedUserID: UUID?
    public var fromFMKVersion: Int
    public var newFMKVersion: Int
    public var recordIDs: [UUID]
    public var remainingGrantees: [UserResponse]
    public var expiresAt: Date
}

/// Revocations begun together (stolen device).
@MemberwiseInit
public struct RevocationList: Codable, Sendable, Equatable {
    public var revocations: [RevocationResponse]
}

/// A record re-encrypted under the new FMK.
@MemberwiseInit
public struct StagedRecord: Codable, Sendable, Equatable {
    public var recordID: UUID
    /// The change sequence of the ciphertext that was re-encrypted: the commit swaps this
    /// record in only if the stored record still carries it (no edit made since is lost).
    public var sourceChangeSeq: Int64
    public var nonce: Data
    public var ciphertext: Data
    public var tag: Data
}

/// A batch of re-encrypted records; uploading a record twice keeps the last.
@MemberwiseInit
public struct UploadBatchRequest: Codable, Sendable, Equatable {
    public var records: [StagedRecord]
}

/// Upload progress.
@MemberwiseInit
public struct UploadBatchResponse: Codable, Sendable, Equatable {
    public var staged: Int
    public var totalStaged: Int
    public var totalExpected: Int
}

/// The new FMK wrapped for one remaining grantee.
@MemberwiseInit
public struct NewGrant: Codable, Sendable, Equatable {
    public var granteeUserID: UUID
    public var wrapping: KeyWrapping
    public var wrappedFMK: Data
    /// For `ecdh`: the grantee's X25519 key the FMK was wrapped to, which must be their
    /// current key (409 `stale_identity_key` otherwise). Absent for the owner's `self` copy.
    public var granteeAgreementPublicKey: Data? = nil
}

/// Commits a revocation: must cover every remaining grantee and no one else.
@MemberwiseInit
public struct CommitRevocationRequest: Codable, Sendable, Equatable {
    public var newFMKVersion: Int
    public var grants: [NewGrant]
    public var clientDurationMs: Int? = nil
    /// The owner's signed `revoke` statement: the new version, everyone who keeps it with the
    /// hash of the copy in `grants`, the revoked user, the commitment to the new FMK.
    public var statement: SignedKeyStatement? = nil
}

/// A committed revocation.
@MemberwiseInit
public struct RevocationCommitted: Codable, Sendable, Equatable {
    public var eventID: UUID
    public var familyMemberID: UUID
    public var newFMKVersion: Int
    public var recordsReencrypted: Int
    public var devicesNotified: Int
}

/// What revoking a user from a family member would do now, before anything changes
/// (`GET /v1/family-members/{id}/revocation-preview?user=U`, the owner's alone). The devices are
/// chosen by the query the commit uses, so the preview and the commit name the same ones
/// (unless a device enrols, retires or someone is granted in between).
@MemberwiseInit
public struct RevocationPreview: Codable, Sendable, Equatable {
    /// A device the commit would command: an active agent device of the revoked user (erase)
    /// or of someone who keeps access (rotate). Interactive devices hold nothing and are not listed.
    @MemberwiseInit
    public struct Device: Codable, Sendable, Equatable {
        public var deviceID: UUID
        public var userID: UUID
        public var userDisplayName: String
        public var name: String
        public var action: DeviceAction
    }

    public var familyMemberID: UUID
    public var revokedUserID: UUID
    public var revokedUserDisplayName: String
    /// Every record of the family member: all are re-encrypted.
    public var recordCount: Int
    public var devices: [Device]
}
