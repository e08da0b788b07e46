import Foundation
import RescindMacros

/// Starts challenge–response authentication for a device.
@MemberwiseInit
public struct ChallengeRequest: Codable, Sendable, Equatable {
    public var deviceID: UUID
}

/// A one-time challenge the device signs (`DeviceAuthentication.signingInput`).
@MemberwiseInit
public struct ChallengeResponse: Codable, Sendable, Equatable {
    public var challengeID: UUID
    public var nonce: Data
    public var expiresAt: Date
}

/// The device's signature over a challenge.
@MemberwiseInit
public struct TokenRequest: Codable, Sendable, Equatable {
    public var challengeID: UUID
    public var deviceID: UUID
    public var signature: Data
}

/// A short-lived bearer token.
@MemberwiseInit
public struct TokenResponse: Codable, Sendable, Equatable {
    public var token: String
    public var expiresAt: Date
}
