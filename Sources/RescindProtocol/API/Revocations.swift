import Foundation

/// Starts revoking one user from one family member.
public struct BeginRevocationRequest: Codable, Sendable, Equatable {
    public var revokedUserID: UUID
    public var reason: String?

    public init(revokedUserID: UUID, reason: String? = nil) {
        self.revokedUserID = revokedUserID
        self.reason = reason
    }
}

/// Starts revoking one user from every family member the caller owns.
public struct BeginUserRevocationRequest: Codable, Sendable, Equatable {
    public var reason: String?

    public init(reason: String? = nil) {
        self.reason = reason
    }
}

/// Starts a rotation that revokes nobody: a new FMK for the same holders, every record
/// re-encrypted (the owner's stolen device held the old FMK). Continued as a revocation.
public struct BeginRotationRequest: Codable, Sendable, Equatable {
    public var reason: String?

    public init(reason: String? = nil) {
        self.reason = reason
    }
}

/// A revocation in progress: what to re-encrypt, and whom to re-wrap the new FMK for.
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

    public init(revocationID: UUID, familyMemberID: UUID, revokedUserID: UUID?, fromFMKVersion: Int, newFMKVersion: Int, recordIDs: [UUID], remainingGrantees: [UserResponse], expiresAt: Date) {
        self.revocationID = revocationID
        self.familyMemberID = familyMemberID
        self.revokedUserID = revokedUserID
        self.fromFMKVersion = fromFMKVersion
        self.newFMKVersion = newFMKVersion
        self.recordIDs = recordIDs
        self.remainingGrantees = remainingGrantees
        self.expiresAt = expiresAt
    }
}

/// Revocations begun together (stolen device).
public struct RevocationList: Codable, Sendable, Equatable {
    public var revocations: [RevocationResponse]

    public init(revocations: [RevocationResponse]) {
        self.revocations = revocations
    }
}

/// A record re-encrypted under the new FMK.
public struct StagedRecord: Codable, Sendable, Equatable {
    public var recordID: UUID
    /// The change sequence of the ciphertext that was re-encrypted: the commit swaps this
    /// record in only if the stored record still carries it (no edit made since is lost).
    public var sourceChangeSeq: Int64
    public var nonce: Data
    public var ciphertext: Data
    public var tag: Data

    public init(recordID: UUID, sourceChangeSeq: Int64, nonce: Data, ciphertext: Data, tag: Data) {
        self.recordID = recordID
        self.sourceChangeSeq = sourceChangeSeq
        self.nonce = nonce
        self.ciphertext = ciphertext
        self.tag = tag
    }
}

/// A batch of re-encrypted records; uploading a record twice keeps the last.
public struct UploadBatchRequest: Codable, Sendable, Equatable {
    public var records: [StagedRecord]

    public init(records: [StagedRecord]) {
        self.records = records
    }
}

/// Upload progress.
public struct UploadBatchResponse: Codable, Sendable, Equatable {
    public var staged: Int
    public var totalStaged: Int
    public var totalExpected: Int

    public init(staged: Int, totalStaged: Int, totalExpected: Int) {
        self.staged = staged
        self.totalStaged = totalStaged
        self.totalExpected = totalExpected
    }
}

/// The new FMK wrapped for one remaining grantee.
public struct NewGrant: Codable, Sendable, Equatable {
    public var granteeUserID: UUID
    public var wrapping: KeyWrapping
    public var wrappedFMK: Data
    /// For `ecdh`: the grantee's X25519 key the FMK was wrapped to, which must be their
    /// current key (409 `stale_identity_key` otherwise). Absent for the owner's `self` copy.
    public var granteeAgreementPublicKey: Data?

    public init(granteeUserID: UUID, wrapping: KeyWrapping, wrappedFMK: Data, granteeAgreementPublicKey: Data? = nil) {
        self.granteeUserID = granteeUserID
        self.wrapping = wrapping
        self.wrappedFMK = wrappedFMK
        self.granteeAgreementPublicKey = granteeAgreementPublicKey
    }
}

/// Commits a revocation: must cover every remaining grantee and no one else.
public struct CommitRevocationRequest: Codable, Sendable, Equatable {
    public var newFMKVersion: Int
    public var grants: [NewGrant]
    public var clientDurationMs: Int?
    /// The owner's signed `revoke` statement: the new version, everyone who keeps it with the
    /// hash of the copy in `grants`, the revoked user, the commitment to the new FMK.
    public var statement: SignedKeyStatement?

    public init(newFMKVersion: Int, grants: [NewGrant], clientDurationMs: Int? = nil, statement: SignedKeyStatement? = nil) {
        self.newFMKVersion = newFMKVersion
        self.grants = grants
        self.clientDurationMs = clientDurationMs
        self.statement = statement
    }
}

/// A committed revocation.
public struct RevocationCommitted: Codable, Sendable, Equatable {
    public var eventID: UUID
    public var familyMemberID: UUID
    public var newFMKVersion: Int
    public var recordsReencrypted: Int
    public var devicesNotified: Int

    public init(eventID: UUID, familyMemberID: UUID, newFMKVersion: Int, recordsReencrypted: Int, devicesNotified: Int) {
        self.eventID = eventID
        self.familyMemberID = familyMemberID
        self.newFMKVersion = newFMKVersion
        self.recordsReencrypted = recordsReencrypted
        self.devicesNotified = devicesNotified
    }
}

/// What revoking a user from a family member would do now, before anything changes
/// (`GET /v1/family-members/{id}/revocation-preview?user=U`, the owner's alone). The devices are
/// chosen by the query the commit uses, so the preview and the commit name the same ones
/// (unless a device enrols, retires or someone is granted in between).
public struct RevocationPreview: Codable, Sendable, Equatable {
    /// A device the commit would command: an active agent device of the revoked user (erase)
    /// or of someone who keeps access (rotate). Interactive devices hold nothing and are not listed.
    public struct Device: Codable, Sendable, Equatable {
        public var deviceID: UUID
        public var userID: UUID
        public var userDisplayName: String
        public var name: String
        public var action: DeviceAction

        public init(deviceID: UUID, userID: UUID, userDisplayName: String, name: String, action: DeviceAction) {
            self.deviceID = deviceID
            self.userID = userID
            self.userDisplayName = userDisplayName
            self.name = name
            self.action = action
        }
    }

    public var familyMemberID: UUID
    public var revokedUserID: UUID
    public var revokedUserDisplayName: String
    /// Every record of the family member: all are re-encrypted.
    public var recordCount: Int
    public var devices: [Device]

    public init(familyMemberID: UUID, revokedUserID: UUID, revokedUserDisplayName: String, recordCount: Int, devices: [Device]) {
        self.familyMemberID = familyMemberID
        self.revokedUserID = revokedUserID
        self.revokedUserDisplayName = revokedUserDisplayName
        self.recordCount = recordCount
        self.devices = devices
    }
}
