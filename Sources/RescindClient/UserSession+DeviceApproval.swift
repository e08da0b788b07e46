import Foundation
import RescindCrypto
import RescindProtocol

/// A device's own word on a governed change: the recovery key's certificate of this device's
/// key (`DeviceCertificate`), and this device's approval signed with that key (`DeviceApproval`).
/// Two certified devices whose keys differ agreeing to an identity rotation make it take effect
/// at once, for the service and for every verifier of the family members the user owns; a thief
/// with one device's files holds one such key.
extension UserSession {
    /// This device's signing key (every session is made with it).
    var deviceKey: Ed25519.PrivateKey { client.credentials!.signingKey }

    /// Certifies this device's key with `recoveryKey` and has the service keep the certificate
    /// (which also lets this device approve and veto at once, as one the words enrolled).
    /// - Throws: `GrantServiceError` 422 `bad_signature` when `recoveryKey` is not the user's current one.
    @discardableResult
    public func certifyThisDevice(with recoveryKey: RecoveryKey) async throws -> DeviceCertificate {
        let certificate = try DeviceCertificate(
            userID: keys.userID, deviceID: deviceID, devicePublicKey: Data(deviceKey.publicKey.rawRepresentation),
            recoveryKey: recoveryKey.signingKey)
        try await client.certifyDevice(certificate)
        return certificate
    }

    /// This device's approval of a statement (its signing input), with the certificate the service
    /// keeps for this device; nil when it keeps none that names this device and its key, signed by
    /// the recovery key my identity key bound (one by an earlier recovery key counts for nothing).
    func deviceApproval(of statement: [UInt8]) async throws -> DeviceApproval? {
        deviceApproval(of: statement, me: try await client.me())
    }

    /// `deviceApproval(of:)` from the service's `me` answer the caller already holds.
    func deviceApproval(of statement: [UInt8], me: MeResponse) -> DeviceApproval? {
        let key = deviceKey
        guard let certificate = me.device.certificate, certificate.deviceID == deviceID,
            certificate.devicePublicKey == Data(key.publicKey.rawRepresentation),
            certificate.isValid(recoveryKey: Self.verifiedRecoveryPublicKey(of: me.user, keys: keys), userID: keys.userID)
        else { return nil }
        return DeviceApproval(approving: statement, certificate: certificate, deviceKey: key)
    }

    /// Approves, from this device, an operation another device of my user began. A rotation or a
    /// transfer is signed with this device's certified key too (when it has a certificate), after
    /// checking that it is what the operation shows, signed by my current identity key: with the
    /// beginning device's approval, it then takes effect at once.
    /// - Throws: `AgentError` `.serviceRefused` for an operation the service does not list, or a
    ///   statement not signed by my current key or saying otherwise (nothing is signed);
    ///   `GrantServiceError` as the service answers.
    public func approve(_ operationID: UUID) async throws -> GovernedOperation {
        guard let operation = try await client.governedOperations().first(where: { $0.operationID == operationID }) else {
            throw AgentError(.serviceRefused, "the grant service lists no operation \(operationID.uuidString.lowercased()) of yours")
        }
        let myKey = Data(keys.identityKey.publicKey.rawRepresentation)
        let statement: [UInt8]
        if let rotation = operation.rotation {
            guard rotation.statement.userID == keys.userID, rotation.hasValidSignatures(), rotation.statement.previousIdentityPublicKey == myKey else {
                throw AgentError(.serviceRefused, "the grant service listed a rotation not signed from your current identity key; nothing was signed")
            }
            statement = try rotation.statement.signingInput()
        } else if let transfer = operation.transfer {
            guard let signed = transfer.statement, signed.statement.kind == .transfer, signed.hasValidSignature(),
                signed.statement.signerIdentityKey == myKey, signed.statement.ownerUserID == keys.userID,
                signed.statement.familyMemberID == transfer.familyMemberID, signed.statement.newOwner?.userID == transfer.newOwnerUserID
            else {
                throw AgentError(.serviceRefused, "the grant service listed a transfer whose statement is not yours or says otherwise; nothing was signed")
            }
            statement = try signed.statement.signingInput()
        } else {
            return try await client.approveOperation(operationID)
        }
        return try await client.approveOperation(operationID, deviceApproval: try await deviceApproval(of: statement))
    }
}
