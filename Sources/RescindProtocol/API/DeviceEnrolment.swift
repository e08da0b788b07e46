import Foundation

/// What kind of machine a device is; only for people reading `rescind device list`.
public enum DeviceKind: String, Codable, Sendable, CaseIterable {
    case phone, tablet, laptop, desktop, server, other
}

/// Whether a device must answer revocations.
///
/// - `agent`: keeps a local cache of keys and records (the device agent, an app) and consumes
///   `device_commands`; every revocation touching its user expects its signed ack.
/// - `interactive`: a client that keeps no FMK or record beyond the process (the `rescind`
///   CLI: its profile holds only the user's keys); it reads through the grant service, which
///   refuses it at once after a revocation, so it has nothing to erase and is not expected.
///
/// A registration that does not say is an agent: expecting a device that never answers shows
/// as overdue, while not expecting one that caches would hide it.
public enum DeviceRole: String, Codable, Sendable, CaseIterable {
    case agent, interactive
}

/// The statement a user's identity key signs to enrol a device.
public enum DeviceEnrolment {
    /// `rescind-enrol-device-v1\n` followed by the canonical JSON of the user id, the
    /// challenge (id and nonce) and the whole device (id, name, kind if any, signing key).
    public static func signingInput(userID: UUID, challengeID: UUID, nonce: Data, device: RegisterDeviceRequest) throws -> [UInt8] {
        let statement = Statement(userID: userID, challengeID: challengeID, nonce: nonce, device: device)
        return Array("rescind-enrol-device-v1\n".utf8) + [UInt8](try CanonicalJSON.encode(statement))
    }

    /// Signs the enrolment of `device` for `userID` with the identity key's signing function.
    public static func request(
        userID: UUID, challenge: ChallengeResponse, device: RegisterDeviceRequest, sign: ([UInt8]) -> [UInt8]
    ) throws -> EnrolDeviceRequest {
        let input = try signingInput(userID: userID, challengeID: challenge.challengeID, nonce: challenge.nonce, device: device)
        return EnrolDeviceRequest(device: device, challengeID: challenge.challengeID, signature: Data(sign(input)))
    }

    struct Statement: Encodable {
        let userID: UUID
        let challengeID: UUID
        let nonce: Data
        let device: RegisterDeviceRequest

    }
}
