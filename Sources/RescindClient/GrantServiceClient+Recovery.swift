import Foundation
import RescindProtocol

extension GrantServiceClient {
    /// A single-use challenge for an order of `userID`'s recovery key (no credentials needed).
    public func recoveryChallenge(for userID: UUID) async throws -> ChallengeResponse {
        try await send(.post, "v1/recovery/challenges", body: RecoveryChallengeRequest(userID: userID), authenticated: false)
    }

    /// Carries out an order signed by a recovery key (no credentials needed).
    public func recoveryAction(_ signed: SignedRecoveryAction) async throws -> RecoveryActionResult {
        try await send(.post, "v1/recovery/actions", body: signed, authenticated: false)
    }
}

extension RecoveryKey {
    /// Orders `kind` for `userID` at once: asks for a fresh challenge and signs the action over it.
    /// - Parameter device: the device to enrol (`.enrol`); `deviceID`: the one to retire, restore
    ///   or clear; `operationID`: the governed operation to approve or cancel; `transfer`: when
    ///   approving an ownership transfer, its `transfer` statement, which the recovery key signs as
    ///   well (verifiers accept a transfer before its delay only with that signature); `rotation`:
    ///   when approving an identity rotation, the rotation, whose statement it signs likewise
    ///   (verifiers follow the owner's `rekey` statements at once only with that signature).
    /// - Throws: `GrantServiceError` as the service answers (422 `bad_signature` for a key that is
    ///   not the user's recovery key, 404 for a user without one).
    @discardableResult
    public func order(
        _ kind: RecoveryAction.Kind, for userID: UUID, device: RegisterDeviceRequest? = nil, deviceID: UUID? = nil,
        operationID: UUID? = nil, transfer: SignedKeyStatement? = nil, rotation: IdentityRotation? = nil,
        through client: GrantServiceClient
    ) async throws -> RecoveryActionResult {
        precondition(transfer == nil || rotation == nil, "an operation is a transfer or a rotation")
        let challenge = try await client.recoveryChallenge(for: userID)
        let signed = try transfer.map { try $0.statement.signingInput() } ?? rotation.map { try $0.statement.signingInput() }
        let action = RecoveryAction(
            userID: userID, challengeID: challenge.challengeID, kind: kind, device: device, deviceID: deviceID, operationID: operationID,
            statementSignature: signed.map { Data(signingKey.signature(for: $0)) })
        let signature = signingKey.signature(for: try action.signingInput(nonce: challenge.nonce))
        return try await client.recoveryAction(SignedRecoveryAction(action: action, signature: Data(signature)))
    }

    /// Approves `operation` at once, signing the statement a transfer or a rotation carries.
    /// Call it only with an operation this client checked says what its user means to approve.
    @discardableResult
    public func approve(_ operation: GovernedOperation, through client: GrantServiceClient) async throws -> RecoveryActionResult {
        try await order(
            .approve, for: operation.userID, operationID: operation.operationID, transfer: operation.transfer?.statement,
            rotation: operation.rotation, through: client)
    }
}
