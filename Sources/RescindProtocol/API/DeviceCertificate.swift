import Foundation
import RescindCrypto

extension DeviceCertificate {
    /// Certifies `devicePublicKey` for `deviceID` of `userID` with `recoveryKey`.
    public init(userID: UUID, deviceID: UUID, devicePublicKey: Data, issuedAt: Date = Date(), recoveryKey: Ed25519.PrivateKey) throws {
        self.init(userID: userID, deviceID: deviceID, devicePublicKey: devicePublicKey, issuedAt: issuedAt, signature: Data())
        signature = Data(recoveryKey.signature(for: try signingInput()))
    }

    /// What the signature covers: every field but the signature.
    struct Signed: Encodable {
        let userID: UUID
        let deviceID: UUID
        let devicePublicKey: Data
        let issuedAt: Date
    }

    /// A domain label, a newline, the canonical JSON of every field but the signature.
    public func signingInput() throws -> [UInt8] {
        Array("rescind.device_certificate.v1\n".utf8) + [UInt8](try CanonicalJSON.encode(Signed(userID: userID, deviceID: deviceID, devicePublicKey: devicePublicKey, issuedAt: issuedAt)))
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

extension DeviceApproval {
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
