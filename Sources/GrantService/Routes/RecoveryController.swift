import Foundation
import Hummingbird
import RescindCrypto
import RescindProtocol
import RescindServiceSupport

/// Orders of a user's recovery key, which stands for the user when a thief holds one of their
/// devices and may have retired the others: `POST /v1/recovery/challenges` (anonymous: the user
/// may have no device left) and `POST /v1/recovery/actions`, signed by the recovery key over a
/// fresh challenge, which enrol, retire, restore or clear a device, and approve or cancel a
/// pending governed operation, at once.
struct RecoveryController {
    let recoveries: RecoveryStore
    let governance: GovernanceStore
    let lifetimes: GrantServiceConfiguration.Lifetimes

    func addRoutes(to group: RouterGroup<GrantRequestContext>) {
        group.post("recovery/challenges", use: challenge)
        group.post("recovery/actions", use: act)
    }

    @Sendable func challenge(_ request: Request, context: GrantRequestContext) async throws -> EditedResponse<ChallengeResponse> {
        let body = try await request.decode(as: RecoveryChallengeRequest.self, context: context)
        return EditedResponse(
            status: .created,
            response: try await recoveries.createChallenge(
                userID: body.userID, nonce: Data(SecureRandom.bytes(count: 32)), lifetime: lifetimes.challenge))
    }

    @Sendable func act(_ request: Request, context: GrantRequestContext) async throws -> EditedResponse<RecoveryActionResult> {
        let signed = try await request.decode(as: SignedRecoveryAction.self, context: context)
        let action = signed.action
        switch action.kind {
        case .enrol:
            guard let device = action.device, action.deviceID == nil else {
                throw APIError.unprocessable("invalid_field", "an enrol action names a device and no device_id")
            }
            try Validation.deviceName(device.name)
            _ = try Validation.signingKey(device.signingPublicKey, field: "action.device.signing_public_key")
        case .retire, .restore, .clear, .vouch:
            guard action.deviceID != nil, action.device == nil, action.operationID == nil else {
                throw APIError.unprocessable("invalid_field", "a \(action.kind.rawValue) action names a device_id and nothing else")
            }
        case .approve, .cancel:
            guard action.operationID != nil, action.device == nil, action.deviceID == nil else {
                throw APIError.unprocessable("invalid_field", "a \(action.kind.rawValue) action names an operation_id and nothing else")
            }
        }
        if let signature = action.statementSignature, action.kind != .approve || signature.count != 64 {
            throw APIError.unprocessable("invalid_field", "statement_signature is 64 bytes, on an approve action only")
        }
        if action.kind == .enrol, action.operationID != nil {
            throw APIError.unprocessable("invalid_field", "an enrol action names a device and nothing else")
        }
        guard let challenge = try await recoveries.redeemChallenge(action.challengeID, userID: action.userID) else {
            throw APIError.unprocessable("invalid_challenge", "unknown, expired or already used recovery challenge")
        }
        guard let key = try? Ed25519.PublicKey(rawRepresentation: [UInt8](challenge.recoveryKey)),
            key.isValidSignature([UInt8](signed.signature), for: try action.signingInput(nonce: challenge.nonce))
        else {
            throw APIError.unprocessable("bad_signature", "the action must be signed with the user's recovery key over this challenge")
        }
        switch action.kind {
        case .enrol:
            let device = action.device!
            try await recoveries.enrol(device, userID: action.userID)
            return EditedResponse(status: .created, response: RecoveryActionResult(kind: .enrol, deviceID: device.deviceID))
        case .retire:
            try await recoveries.retire(action.deviceID!, userID: action.userID)
            return EditedResponse(status: .ok, response: RecoveryActionResult(kind: .retire, deviceID: action.deviceID!))
        case .restore:
            try await recoveries.restore(action.deviceID!, userID: action.userID)
            return EditedResponse(status: .ok, response: RecoveryActionResult(kind: .restore, deviceID: action.deviceID!))
        case .clear:
            try await governance.clearByRecoveryKey(action.deviceID!, userID: action.userID)
            return EditedResponse(status: .ok, response: RecoveryActionResult(kind: .clear, deviceID: action.deviceID!))
        case .vouch:
            try await governance.vouchByRecoveryKey(action.deviceID!, userID: action.userID)
            return EditedResponse(status: .ok, response: RecoveryActionResult(kind: .vouch, deviceID: action.deviceID!))
        case .approve:
            let operation = try await governance.approveByRecoveryKey(
                action.operationID!, userID: action.userID, recoveryKey: challenge.recoveryKey,
                statementSignature: action.statementSignature)
            return EditedResponse(status: .ok, response: RecoveryActionResult(kind: .approve, operation: operation))
        case .cancel:
            let operation = try await governance.cancelByRecoveryKey(action.operationID!, userID: action.userID)
            return EditedResponse(status: .ok, response: RecoveryActionResult(kind: .cancel, operation: operation))
        }
    }
}
