import Foundation
import Hummingbird
import RescindCrypto
import RescindProtocol
import RescindServiceSupport

/// The caller's user's keys escrowed to their recovery key: `PUT /v1/key-backup` (signed by
/// the recovery key, for the user's current keys) and `GET /v1/key-backup` (any active device
/// of the user, e.g. one the recovery key enrolled when no other was left).
struct KeyBackupController {
    let backups: KeyBackupStore

    func addRoutes(to group: RouterGroup<GrantRequestContext>) {
        group.put("key-backup", use: store)
        group.get("key-backup", use: fetch)
    }

    @Sendable func store(_ request: Request, context: GrantRequestContext) async throws -> HTTPResponse.Status {
        let caller = try context.requireIdentity()
        let backup = try await request.decode(as: KeyBackup.self, context: context)
        guard backup.userID == caller.userID else { throw APIError.forbidden("a device stores only its own user's key backup") }
        _ = try Validation.signingKey(backup.identityPublicKey, field: "identity_public_key")
        _ = try Validation.agreementKey(backup.agreementPublicKey)
        _ = try Validation.agreementKey(backup.ephemeralPublicKey, field: "ephemeral_public_key")
        let recoveryKey = try Validation.signingKey(backup.recoveryPublicKey, field: "recovery_public_key")
        for (field, wrapped) in [("agreement_key", backup.agreementKey), ("identity_key", backup.identityKey), ("master_key", backup.masterKey)]
        where wrapped.count != AESKeyWrap.wrappedKeyByteCount {
            throw APIError.unprocessable("invalid_field", "\(field) is a wrapped key of \(AESKeyWrap.wrappedKeyByteCount) bytes")
        }
        guard backup.signature.count == Ed25519.signatureByteCount,
            recoveryKey.isValidSignature([UInt8](backup.signature), for: try backup.signingInput())
        else {
            throw APIError.unprocessable("bad_signature", "a key backup must be signed with the recovery key it names")
        }
        try await backups.store(backup)
        return .noContent
    }

    @Sendable func fetch(_ request: Request, context: GrantRequestContext) async throws -> KeyBackup {
        let caller = try context.requireIdentity()
        guard let backup = try await backups.backup(of: caller.userID) else {
            throw APIError.notFound("key backup")
        }
        return backup
    }
}
