import Foundation
import RescindMacros

/// A device to register; its Ed25519 key is what it authenticates and signs acks with.
/// Another device of an existing user is enrolled with `EnrolDeviceRequest`, which wraps
/// this in a statement signed by the user's identity key.
@MemberwiseInit
public struct RegisterDeviceRequest: Codable, Sendable, Equatable {
    public var deviceID: UUID
    public var name: String
    /// Optional; shown by `rescind device list`. Absent from the JSON when nil, so that
    /// signatures made before the field existed still verify.
    public var kind: DeviceKind? = nil
    /// Whether revocations wait for this device's ack; absent means `agent` (and from the
    /// JSON when nil, like `kind`, so earlier signatures still verify).
    public var role: DeviceRole? = nil
    public var signingPublicKey: Data
}

/// Registers a user with their public keys and first device, signed with the identity key (`UserRegistration.signingInput`).
@MemberwiseInit
public struct RegisterUserRequest: Codable, Sendable, Equatable {
    public var userID: UUID
    public var displayName: String
    public var agreementPublicKey: Data
    public var identityPublicKey: Data
    public var device: RegisterDeviceRequest
    /// The public half of the user's recovery key (Ed25519), whose seed is kept on paper only.
    public var recoveryPublicKey: Data? = nil
    public var signature: Data
    /// By the recovery key over the same signing input: proof that whoever registers it holds it.
    public var recoverySignature: Data? = nil
    /// The identity key's `RecoveryKeyBinding` of `recoveryPublicKey` (covered by `signature`).
    public var recoveryBinding: Data? = nil
}

/// A user's public identity: what a granter needs to wrap an FMK for them.
@MemberwiseInit
public struct UserResponse: Codable, Sendable, Equatable {
    public var userID: UUID
    public var displayName: String
    public var agreementPublicKey: Data
    public var identityPublicKey: Data
    /// 1 for the keys registered first, one more for each rotation (`IdentityRotation`).
    public var identityGeneration: Int = 1
    /// The public half of the user's recovery key, when they registered one.
    public var recoveryPublicKey: Data? = nil
    /// The current identity key's `RecoveryKeyBinding` of `recoveryPublicKey`, when one was made
    /// for this pair of keys: what a client checks before naming the recovery key anywhere.
    public var recoveryBinding: Data? = nil
}

/// A registered device.
@MemberwiseInit
public struct DeviceResponse: Codable, Sendable, Equatable {
    public var deviceID: UUID
    public var userID: UUID
    public var name: String
    public var kind: DeviceKind? = nil
    /// Whether revocations wait for this device's ack (`DeviceRole`).
    public var role: DeviceRole = .agent
    public var signingPublicKey: Data
    public var registeredAt: Date
    /// The device's last authenticated call, to the minute; nil if it never made one.
    public var lastUsedAt: Date? = nil
    public var retiredAt: Date? = nil
    /// Per family member, the last key and change-feed position the device fetched
    /// (`DeviceSyncState`): what it could hold. In `GET /v1/devices` only (absent elsewhere).
    public var familyMembers: [DeviceSyncState]? = nil
    /// The recovery key's certificate of the device's key, if the recovery words made one
    /// (`DeviceCertificate`): what the device attaches to its approvals.
    public var certificate: DeviceCertificate? = nil
}

/// A device's last check-in for one family member: the FMK version of the last key it fetched,
/// the furthest change-feed position it was given, and when (to the minute). What the device
/// could hold: the basis of a revocation's exposure report.
@MemberwiseInit
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
@MemberwiseInit
public struct DeviceList: Codable, Sendable, Equatable {
    public var devices: [DeviceResponse]
}

/// Who a bearer token belongs to.
@MemberwiseInit
public struct MeResponse: Codable, Sendable, Equatable {
    public var user: UserResponse
    public var device: DeviceResponse
}

/// The grant service's message-signing key, which agents pin.
@MemberwiseInit
public struct ServiceKeyResponse: Codable, Sendable, Equatable {
    public var signingPublicKey: Data
}
