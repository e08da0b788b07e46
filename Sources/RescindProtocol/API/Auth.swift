import Foundation

/// Starts challenge–response authentication for a device.
public struct ChallengeRequest: Codable, Sendable, Equatable {
    public var deviceID: UUID

    public init(deviceID: UUID) {
        self.deviceID = deviceID
    }
}

/// A one-time challenge the device signs (`DeviceAuthentication.signingInput`).
public struct ChallengeResponse: Codable, Sendable, Equatable {
    public var challengeID: UUID
    public var nonce: Data
    public var expiresAt: Date

    public init(challengeID: UUID, nonce: Data, expiresAt: Date) {
        self.challengeID = challengeID
        self.nonce = nonce
        self.expiresAt = expiresAt
    }
}

/// The device's signature over a challenge.
public struct TokenRequest: Codable, Sendable, Equatable {
    public var challengeID: UUID
    public var deviceID: UUID
    public var signature: Data

    public init(challengeID: UUID, deviceID: UUID, signature: Data) {
        self.challengeID = challengeID
        self.deviceID = deviceID
        self.signature = signature
    }
}

/// A short-lived bearer token.
public struct TokenResponse: Codable, Sendable, Equatable {
    public var token: String
    public var expiresAt: Date

    public init(token: String, expiresAt: Date) {
        self.token = token
        self.expiresAt = expiresAt
    }
}
