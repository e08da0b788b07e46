import Foundation
import RescindPostgres
import RescindProtocol
import RescindServiceSupport

/// What a user's recovery key orders: its challenges, and the device changes it makes at once.
struct RecoveryStore: Sendable {
    let pool: PostgresConnectionPool
    /// Where the device changes it orders are announced (`OutboxWriter.announce`).
    let outbox: OutboxWriter
    /// Live challenges a user may have at once: an anonymous caller cannot grow the table beyond it.
    static let liveChallengesPerUser = 5

    /// A challenge for a user with a recovery key.
    /// - Throws: 404 for an unknown user or one without a recovery key (the same answer for
    ///   both); 429 `too_many_challenges` when `liveChallengesPerUser` are live.
    func createChallenge(userID: UUID, nonce: Data, lifetime: Duration) async throws -> ChallengeResponse {
        try await pool.transaction { connection in
            guard try await connection.query(
                "SELECT 1 FROM users WHERE user_id = \(userID) AND recovery_public_key IS NOT NULL FOR UPDATE"
            ).first != nil else { throw APIError.notFound("user with a recovery key") }
            try await connection.execute("DELETE FROM recovery_challenges WHERE user_id = \(userID) AND expires_at < now()")
            let live = try await connection.query(
                "SELECT count(*) FROM recovery_challenges WHERE user_id = \(userID) AND used_at IS NULL"
            ).first!.decode(Int.self, column: 0)
            guard live < Self.liveChallengesPerUser else {
                throw APIError.tooMany(
                    "too_many_challenges", "\(live) recovery challenges of this user are open; answer or let them expire",
                    retryAfter: Int(lifetime.wholeSeconds))
            }
            let challengeID = UUID()
            let expiresAt = try await connection.query(
                """
                INSERT INTO recovery_challenges (challenge_id, user_id, nonce, expires_at)
                VALUES (\(challengeID), \(userID), \(nonce), now() + make_interval(secs => \(lifetime.wholeSeconds)))
                RETURNING expires_at
                """
            ).first!.decode(Date.self, column: 0)
            return ChallengeResponse(challengeID: challengeID, nonce: nonce, expiresAt: expiresAt)
        }
    }

    /// Spends the challenge (whatever the outcome: a signature works once) and returns its nonce
    /// and the user's recovery key, or nil when the challenge is unknown, another user's, expired
    /// or used.
    func redeemChallenge(_ challengeID: UUID, userID: UUID) async throws -> (nonce: Data, recoveryKey: Data)? {
        try await pool.withConnection { connection in
            try await connection.query(
                """
                UPDATE recovery_challenges c SET used_at = now() FROM users u
                WHERE c.challenge_id = \(challengeID) AND c.user_id = \(userID) AND u.user_id = c.user_id
                  AND c.used_at IS NULL AND c.expires_at > now() AND u.recovery_public_key IS NOT NULL
                RETURNING c.nonce, u.recovery_public_key
                """
            ).first.map { try $0.decode(Data.self, Data.self) }
        }
    }

    /// Enrols a device of `userID`, whatever the state of its other devices.
    func enrol(_ device: RegisterDeviceRequest, userID: UUID) async throws {
        try await pool.transaction { connection in
            do {
                try await IdentityStore.insertDevice(device, userID: userID, on: connection)
            } catch let error as PostgresError where error.isUniqueViolation {
                throw APIError.conflict("already_registered", "a device with this id or key already exists")
            }
            try await outbox.announce(
                GovernanceNotice(.enrolDevice, device: device.deviceID, of: userID, actor: nil), sparing: nil, on: connection)
        }
    }

    /// Retires a device of `userID` as `IdentityStore.retireDevice` does, with no calling device.
    func retire(_ deviceID: UUID, userID: UUID) async throws {
        try await pool.transaction { connection in
            try await Self.lockDevice(deviceID, of: userID, on: connection)
            try await IdentityStore.retire(deviceID, of: userID, by: nil, outbox: outbox, on: connection)
        }
    }

    /// Undoes a retirement: the device authenticates again with its own key (its tokens stay gone).
    /// The recovery key stands for the device from now on, as if it had enrolled it: it governs
    /// at once and is no longer provisional on the device that enrolled it.
    func restore(_ deviceID: UUID, userID: UUID) async throws {
        try await pool.transaction { connection in
            try await Self.lockDevice(deviceID, of: userID, on: connection)
            try await connection.execute(
                """
                UPDATE devices SET retired_at = NULL, enrolled_by = NULL, governs_from = least(governs_from, registered_at)
                WHERE device_id = \(deviceID)
                """)
            try await outbox.announce(
                GovernanceNotice(.restoreDevice, device: deviceID, of: userID, actor: nil), sparing: nil, on: connection)
        }
    }

    private static func lockDevice(_ deviceID: UUID, of userID: UUID, on connection: PostgresConnection) async throws {
        guard try await connection.query(
            "SELECT 1 FROM devices WHERE device_id = \(deviceID) AND user_id = \(userID) FOR UPDATE"
        ).first != nil else { throw APIError.notFound("device of this user") }
    }
}
