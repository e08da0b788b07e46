import Foundation
import RescindClient
import RescindCrypto
import RescindProtocol

/// The recovery keys of the harness's users: derived from the user id, so a test that acts as
/// the owner holding their paper words finds them without carrying them around. Tests that play
/// a thief never use it (the thief has no paper).
public enum TestRecovery {
    public static func key(for userID: UUID) throws -> RecoveryKey {
        try RecoveryKey(seed: SHA256.hash(Array("rescind-test-recovery\n\(userID.uuidString)".utf8)))
    }
}

extension UserSession {
    /// Rotates this user's identity at once, as an owner with their recovery words does: begun
    /// from this device, approved with the recovery key. Nothing is re-wrapped (`rewrapHeldKeys`).
    @discardableResult
    public func rotateIdentityAtOnce(
        to newKeys: UserKeys, currentGeneration: Int, recoveryKey: RecoveryKey? = nil
    ) async throws -> GovernedOperation {
        let operation = try await registerRotation(to: newKeys, currentGeneration: currentGeneration)
        let key = try recoveryKey ?? TestRecovery.key(for: keys.userID)
        return try await key.approve(operation, through: client).operation!
    }
}

extension UserSession {
    /// Hands ownership at once, as an owner with their recovery words does: begun from this
    /// device, approved with the recovery key.
    @discardableResult
    public func transferOwnershipAtOnce(_ familyMemberID: UUID, to newOwner: UUID, recoveryKey: RecoveryKey? = nil) async throws -> GovernedOperation {
        let operation = try await transferOwnership(familyMemberID, to: newOwner)
        let key = try recoveryKey ?? TestRecovery.key(for: keys.userID)
        return try await key.approve(operation, through: client).operation!
    }
}

extension GrantServiceHarness {
    /// Plays the security delay running out for `userID`'s pending operations: their times move
    /// back a day (the database is the service's clock), and the next listing, by any device of
    /// the user (`reader`), applies them as the janitor would.
    public func elapseSecurityDelay(of userID: UUID, listingWith reader: UserSession) async throws -> [GovernedOperation] {
        try await withConnection { connection in
            try await connection.execute(
                """
                UPDATE governed_operations
                SET received_at = received_at - interval '25 hours', effective_at = effective_at - interval '25 hours'
                WHERE user_id = \(userID) AND state = 'pending'
                """)
        }
        return try await reader.client.governedOperations()
    }
}

extension GrantServiceHarness {
    /// Plays time passing since `userID`'s devices were enrolled (a household's iPad has been
    /// theirs for months): each governs at once, as if enrolled a security delay ago.
    public func ageEnrolments(of userID: UUID) async throws {
        try await withConnection { connection in
            try await connection.execute("UPDATE devices SET governs_from = now() - interval '1 day' WHERE user_id = \(userID)")
        }
    }
}

extension RecoveryKey {
    /// Enrols a new device of `userID` with this recovery key alone, as an owner with no device
    /// left does (it governs at once). - Returns: its id and key.
    public func enrolNewDevice(
        of userID: UUID, name: String, kind: DeviceKind, through client: GrantServiceClient
    ) async throws -> (deviceID: UUID, deviceKey: Ed25519.PrivateKey) {
        let deviceKey = Ed25519.PrivateKey(), deviceID = UUID()
        try await order(
            .enrol, for: userID,
            device: RegisterDeviceRequest(
                deviceID: deviceID, name: name, kind: kind, role: .interactive, signingPublicKey: Data(deviceKey.publicKey.rawRepresentation)),
            through: client)
        return (deviceID, deviceKey)
    }
}
