import Foundation
import RescindCrypto
import RescindMacros

/// The recovery key's word that a device's signing key is one of its user's devices: the
/// recovery key's Ed25519 signature over the user, the device and its key.
///
/// Every device holds its user's identity key, so nothing a device signs with that key can be told
/// from what a thief signs with a copy of it. Each device's own signing key is different, and a
/// certificate lets a verifier tell two of them apart without asking the grant service: two
/// certified keys that differ are two devices, and a thief with one device's files holds one.
/// Only the recovery words make one (at `identity create` for the first device, for a device the
/// words enrol, and for a device that asks them to vouch for it on itself), so a thief who enrols
/// a device of their own gets none, and a compromised service cannot forge one.
@MemberwiseInit
public struct DeviceCertificate: Codable, Sendable, Equatable {
    public var userID: UUID
    public var deviceID: UUID
    /// The device's Ed25519 signing key, the one it authenticates with.
    public var devicePublicKey: Data
    public var issuedAt: Date
    /// The recovery key's signature over `signingInput()`.
    public var signature: Data

    /// Certifies `devicePublicKey` for `deviceID` of `userID` with `recoveryKey`.
    public init(userID: UUID, deviceID: UUID, devicePublicKey: Data, issuedAt: Date = Date(), recoveryKey: Ed25519.PrivateKey) throws {
        self.init(userID: userID, deviceID: deviceID, devicePublicKey: devicePublicKey, issuedAt: issuedAt, signature: Data())
        signature = Data(recoveryKey.signature(for: try signingInput()))
    }

    enum CodingKeys: CodingKey {
        case userID, deviceID, devicePublicKey, issuedAt, signature
    }

    struct Signed: Encodable {
        let certificate: DeviceCertificate

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(certificate.userID, forKey: .userID)
            try container.encode(certificate.deviceID, forKey: .deviceID)
            try container.encode(certificate.devicePublicKey, forKey: .devicePublicKey)
            try container.encode(certificate.issuedAt, forKey: .issuedAt)
        }
    }

    /// A domain label, a newline, the canonical JSON of every field but the signature.
    public func signingInput() throws -> [UInt8] {
        Array("rescind.device_certificate.v1\n".utf8) + [UInt8](try CanonicalJSON.encode(Signed(certificate: self)))
    }

    /// Whether `recoveryKey` signed this certificate for a device of `userID`; false without a
    /// recovery key, or for a malformed key or signature.
    public func isValid(recoveryKey: Data?, userID: UUID) -> Bool {
        guard self.userID == userID, devicePublicKey.count == 32, let recoveryKey,
            let key = try? Ed25519.PublicKey(rawRepresentation: [UInt8](recoveryKey)),
            let input = try? signingInput()
        else { return false }
        return key.isValidSignature([UInt8](signature), for: input)
    }
}

/// A certified device's signature over a governed statement (an identity rotation): the
/// device's own key agreeing to it, with the certificate that makes the key one of the user's
/// devices. Kept beside the statement, outside anything it is hashed or signed with.
@MemberwiseInit
public struct DeviceApproval: Codable, Sendable, Equatable {
    public var certificate: DeviceCertificate
    /// The device key's signature over `DeviceApproval.signingInput(of:)`.
    public var signature: Data

    /// `deviceKey` (the certified one) approving the statement whose signing input is `statement`.
    public init(approving statement: [UInt8], certificate: DeviceCertificate, deviceKey: Ed25519.PrivateKey) {
        precondition(Data(deviceKey.publicKey.rawRepresentation) == certificate.devicePublicKey, "a device approves with its certified key")
        self.init(certificate: certificate, signature: Data(deviceKey.signature(for: Self.signingInput(of: statement))))
    }

    /// A domain label of its own before the statement's signing input, so that nothing a device key
    /// signs elsewhere (an authentication challenge) doubles as an approval.
    public static func signingInput(of statement: [UInt8]) -> [UInt8] {
        Array("rescind.device_approval.v1\n".utf8) + statement
    }

    /// Whether the certificate is `recoveryKey`'s for a device of `userID` and its key signed `statement`.
    public func isValid(for statement: [UInt8], recoveryKey: Data?, userID: UUID) -> Bool {
        guard certificate.isValid(recoveryKey: recoveryKey, userID: userID),
            let key = try? Ed25519.PublicKey(rawRepresentation: [UInt8](certificate.devicePublicKey))
        else { return false }
        return key.isValidSignature([UInt8](signature), for: Self.signingInput(of: statement))
    }
}

extension [DeviceApproval] {
    /// How many certified devices must agree for a governed statement to count at once.
    public static let coSigningDevices = 2

    /// The distinct device keys among the approvals that hold (`DeviceApproval.isValid`).
    public func certifiedKeys(for statement: [UInt8], recoveryKey: Data?, userID: UUID) -> Set<Data> {
        Set(filter { $0.isValid(for: statement, recoveryKey: recoveryKey, userID: userID) }.map(\.certificate.devicePublicKey))
    }

    /// Whether `coSigningDevices` devices with different keys, certified by `recoveryKey` for
    /// `userID`, approved `statement`: one device's files, a thief's copy, hold one such key.
    public func coSign(_ statement: [UInt8], recoveryKey: Data?, userID: UUID) -> Bool {
        certifiedKeys(for: statement, recoveryKey: recoveryKey, userID: userID).count >= Self.coSigningDevices
    }
}
