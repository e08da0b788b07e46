import Foundation

/// A device to register; its Ed25519 key is what it authenticates and signs acks with.
/// Another device of an existing user is enrolled with `EnrolDeviceRequest`, which wraps
/// this in a statement signed by the user's identity key.
public struct RegisterDeviceRequest: Codable, Sendable, Equatable {
    public var deviceID: UUID
    public var name: String
    /// Optional; shown by `rescind device list`. Absent from the JSON when nil, so that
    /// signatures made before the field existed still verify.
    public var kind: DeviceKind?
    /// Whether revocations wait for this device's ack; absent means `agent` (and from the
    /// JSON when nil, like `kind`, so earlier signatures still verify).
    public var role: DeviceRole?
    public var signingPublicKey: Data

    public init(deviceID: UUID, name: String, kind: DeviceKind? = nil, role: DeviceRole? = nil, signingPublicKey: Data) {
        self.deviceID = deviceID
        self.name = name
        self.kind = kind
        self.role = role
        self.signingPublicKey = signingPublicKey
    }
}

/// Registers a user with their public keys and first device, signed with the identity key (`UserRegistration.signingInput`).
public struct RegisterUserRequest: Codable, Sendable, Equatable {
    public var userID: UUID
    public var displayName: String
    public var agreementPublicKey: Data
    public var identityPublicKey: Data
    public var device: RegisterDeviceRequest
    /// The public half of the user's recovery key (Ed25519), whose seed is kept on paper only.
    public var recoveryPublicKey: Data?
    public var signature: Data
    /// By the recovery key over the same signing input: proof that whoever registers it holds it.
    public var recoverySignature: Data?
    /// The identity key's `RecoveryKeyBinding` of `recoveryPublicKey` (covered by `signature`).
    public var recoveryBinding: Data?

    public init(
        userID: UUID, displayName: String, agreementPublicKey: Data, identityPublicKey: Data, device: RegisterDeviceRequest,
        recoveryPublicKey: Data? = nil, signature: Data, recoverySignature: Data? = nil, recoveryBinding: Data? = nil
    ) {
        self.userID = userID
        self.displayName = displayName
        self.agreementPublicKey = agreementPublicKey
        self.identityPublicKey = identityPublicKey
        self.device = device
        self.recoveryPublicKey = recoveryPublicKey
        self.signature = signature
        self.recoverySignature = recoverySignature
        self.recoveryBinding = recoveryBinding
    }
}

/// A user's public identity: what a granter needs to wrap an FMK for them.
public struct UserResponse: Codable, Sendable, Equatable {
    public var userID: UUID
    public var displayName: String
    public var agreementPublicKey: Data
    public var identityPublicKey: Data
    /// 1 for the keys registered first, one more for each rotation (`IdentityRotation`).
    public var identityGeneration: Int
    /// The public half of the user's recovery key, when they registered one.
    public var recoveryPublicKey: Data?
    /// The current identity key's `RecoveryKeyBinding` of `recoveryPublicKey`, when one was made
    /// for this pair of keys: what a client checks before naming the recovery key anywhere.
    public var recoveryBinding: Data?

    public init(
        userID: UUID, displayName: String, agreementPublicKey: Data, identityPublicKey: Data, identityGeneration: Int = 1,
        recoveryPublicKey: Data? = nil, recoveryBinding: Data? = nil
    ) {
        self.userID = userID
        self.displayName = displayName
        self.agreementPublicKey = agreementPublicKey
        self.identityPublicKey = identityPublicKey
        self.identityGeneration = identityGeneration
        self.recoveryPublicKey = recoveryPublicKey
        self.recoveryBinding = recoveryBinding
    }
}

/// A registered device.
public struct DeviceResponse: Codable, Sendable, Equatable {
    public var deviceID: UUID
    public var userID: UUID
    public var name: String
    public var kind: DeviceKind?
    /// Whether revocations wait for this device's ack (`DeviceRole`).
    public var role: DeviceRole
    public var signingPublicKey: Data
    public var registeredAt: Date
    /// The device's last authenticated call, to the minute; nil if it never made one.
    public var lastUsedAt: Date?
    public var retiredAt: Date?
    /// Per family member, the last key and change-feed position the device fetched
    /// (`DeviceSyncState`): what it could hold. In `GET /v1/devices` only (absent elsewhere).
    public var familyMembers: [DeviceSyncState]?
    /// The recovery key's certificate of the device's key, if the recovery words made one
    /// (`DeviceCertificate`): what the device attaches to its approvals.
    public var certificate: DeviceCertificate?

    public init(
        deviceID: UUID, userID: UUID, name: String, kind: DeviceKind? = nil, role: DeviceRole = .agent, signingPublicKey: Data,
        registeredAt: Date, lastUsedAt: Date? = nil, retiredAt: Date? = nil, familyMembers: [DeviceSyncState]? = nil,
        certificate: DeviceCertificate? = nil
    ) {
        self.deviceID = deviceID
        self.userID = userID
        self.name = name
        self.kind = kind
        self.role = role
        self.signingPublicKey = signingPublicKey
        self.registeredAt = registeredAt
        self.lastUsedAt = lastUsedAt
        self.retiredAt = retiredAt
        self.familyMembers = familyMembers
        self.certificate = certificate
    }
}

/// A device's last check-in for one family member: the FMK version of the last key it fetched,
/// the furthest change-feed position it was given, and when (to the minute). What the device
/// could hold: the basis of a revocation's exposure report.
public struct DeviceSyncState: Codable, Sendable, Equatable {
    public var familyMemberID: UUID
    /// The version of the last key it fetched (or, if it read the feed before fetching any key,
    /// the version of the ciphertext it was given).
    public var fmkVersion: Int
    /// The change sequence of the last change it was given by the change feed; nil if the feed
    /// never gave it one.
    public var changeSeq: Int64?
    /// When it last fetched either, to the minute.
    public var fetchedAt: Date

    public init(familyMemberID: UUID, fmkVersion: Int, changeSeq: Int64?, fetchedAt: Date) {
        self.familyMemberID = familyMemberID
        self.fmkVersion = fmkVersion
        self.changeSeq = changeSeq
        self.fetchedAt = fetchedAt
    }

    enum CodingKeys: CodingKey {
        case familyMemberID, fmkVersion, changeSeq, fetchedAt
    }

    /// `change_seq` is always present, `null` when the feed never gave a change.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(familyMemberID, forKey: .familyMemberID)
        try container.encode(fmkVersion, forKey: .fmkVersion)
        try container.encode(changeSeq, forKey: .changeSeq)
        try container.encode(fetchedAt, forKey: .fetchedAt)
    }
}

/// A user's devices.
public struct DeviceList: Codable, Sendable, Equatable {
    public var devices: [DeviceResponse]

    public init(devices: [DeviceResponse]) {
        self.devices = devices
    }
}

/// Who a bearer token belongs to.
public struct MeResponse: Codable, Sendable, Equatable {
    public var user: UserResponse
    public var device: DeviceResponse

    public init(user: UserResponse, device: DeviceResponse) {
        self.user = user
        self.device = device
    }
}

/// The grant service's message-signing key, which agents pin.
public struct ServiceKeyResponse: Codable, Sendable, Equatable {
    public var signingPublicKey: Data

    public init(signingPublicKey: Data) {
        self.signingPublicKey = signingPublicKey
    }
}
