import Foundation
import RescindObservability
import RescindPostgres
import RescindProtocol
import RescindServiceSupport

/// Users, devices and the device-authentication state (challenges, hashed tokens).
struct IdentityStore: Sendable {
    let pool: PostgresConnectionPool
    /// Where enrolments and retirements are announced (`OutboxWriter.announce`).
    let outbox: OutboxWriter
    /// How long a device another device enrols waits before it governs (`insertDevice`).
    var securityDelay: Duration = GrantServiceConfiguration.Lifetimes().securityDelay

    func registerUser(_ request: RegisterUserRequest) async throws -> UserResponse {
        try await pool.transaction { connection in
            do {
                try await connection.execute(
                    """
                    INSERT INTO users (user_id, display_name, agreement_public_key, identity_public_key, recovery_public_key,
                                       recovery_binding)
                    VALUES (\(request.userID), \(request.displayName), \(request.agreementPublicKey), \(request.identityPublicKey),
                            \(request.recoveryPublicKey), \(request.recoveryBinding))
                    """)
                try await Self.insertDevice(request.device, userID: request.userID, on: connection)
            } catch let error as PostgresError where error.isUniqueViolation {
                throw APIError.conflict("already_registered", "a user or device with this id or key already exists")
            }
        }
        return UserResponse(
            userID: request.userID, displayName: request.displayName,
            agreementPublicKey: request.agreementPublicKey, identityPublicKey: request.identityPublicKey,
            recoveryPublicKey: request.recoveryPublicKey, recoveryBinding: request.recoveryBinding)
    }

    /// Enrols a device for `userID` (the caller has verified the identity key's signature)
    /// while every device in `vouching` (the caller's, the challenge's) is still active.
    /// Their rows are share-locked first, so a concurrent retirement either comes first and
    /// the enrolment is refused with 401, or comes after it and finds the new device listed.
    /// The enrolment is announced to the user's other devices, and to the owners who share with
    /// the user (`caller`: the device that asked).
    func registerDevice(
        _ request: RegisterDeviceRequest, userID: UUID, caller: UUID, vouching: Set<UUID>
    ) async throws -> DeviceResponse {
        try await pool.transaction { connection in
            let active = try await connection.query(
                """
                SELECT device_id FROM devices
                WHERE device_id = ANY(\(PostgresArray(Array(vouching)))) AND user_id = \(userID) AND retired_at IS NULL
                FOR SHARE
                """)
            guard active.count == vouching.count else { throw APIError.unauthenticated }
            for device in vouching { try await GovernanceStore.refuseIfFrozen(device, on: connection) }
            do {
                try await Self.insertDevice(
                    request, userID: userID, governingAfter: securityDelay, enrolledBy: caller, on: connection)
            } catch let error as PostgresError where error.isUniqueViolation {
                throw APIError.conflict("already_registered", "a device with this id or key already exists")
            }
            let governsFrom = try await connection.query(
                "SELECT governs_from FROM devices WHERE device_id = \(request.deviceID)"
            ).first!.decode(Date.self, column: 0)
            try await outbox.announce(
                GovernanceNotice(.enrolDevice, device: request.deviceID, of: userID, actor: caller, provisionalUntil: governsFrom),
                sparing: caller, on: connection)
            return try await device(request.deviceID, on: connection)!
        }
    }

    /// - Parameters:
    ///   - governingAfter: how long until the device may approve or veto governed operations
    ///     (`GovernanceStore`): zero for a user's first device and one the recovery key enrols,
    ///     the security delay when another device enrols it.
    ///   - enrolledBy: the device that enrolled it, which it is provisional on until it governs
    ///     (`retire`).
    static func insertDevice(
        _ request: RegisterDeviceRequest, userID: UUID, governingAfter delay: Duration = .zero, enrolledBy: UUID? = nil,
        on connection: PostgresConnection
    ) async throws {
        try await connection.execute(
            """
            INSERT INTO devices (device_id, user_id, name, kind, role, signing_public_key, governs_from, enrolled_by)
            VALUES (
                \(request.deviceID), \(userID), \(request.name), \(request.kind?.rawValue),
                \((request.role ?? .agent).rawValue), \(request.signingPublicKey), now() + make_interval(secs => \(delay.wholeSeconds)),
                \(enrolledBy))
            """)
    }

    // MARK: Enrolment challenges

    /// A one-time enrolment challenge for the user of an active device, tied to that device.
    func createEnrolmentChallenge(userID: UUID, deviceID: UUID, nonce: Data, lifetime: Duration) async throws -> ChallengeResponse {
        try await pool.withConnection { connection in
            let challengeID = UUID()
            let rows = try await connection.query(
                """
                INSERT INTO enrolment_challenges (challenge_id, user_id, device_id, nonce, expires_at)
                SELECT \(challengeID), user_id, device_id, \(nonce), now() + make_interval(secs => \(lifetime.wholeSeconds))
                FROM devices WHERE device_id = \(deviceID) AND user_id = \(userID) AND retired_at IS NULL
                RETURNING expires_at
                """)
            guard let expiresAt = try rows.first?.decode(Date.self, column: 0) else { throw APIError.unauthenticated }
            return ChallengeResponse(challengeID: challengeID, nonce: nonce, expiresAt: expiresAt)
        }
    }

    /// Spends an enrolment challenge of `userID` (whatever the outcome, it cannot be
    /// answered twice) and returns its nonce, the device it was issued to and the user's
    /// identity key, or nil when it is unknown, another user's, expired, used, or its device
    /// has been retired.
    func redeemEnrolmentChallenge(
        _ challengeID: UUID, userID: UUID
    ) async throws -> (nonce: Data, deviceID: UUID, identityKey: Data)? {
        try await pool.withConnection { connection in
            let rows = try await connection.query(
                """
                UPDATE enrolment_challenges c SET used_at = now()
                FROM devices d, users u
                WHERE c.challenge_id = \(challengeID) AND c.user_id = \(userID) AND d.device_id = c.device_id
                  AND u.user_id = c.user_id AND c.used_at IS NULL AND c.expires_at > now() AND d.retired_at IS NULL
                RETURNING c.nonce, c.device_id, u.identity_public_key
                """)
            guard let row = rows.first else { return nil }
            let (nonce, device, key) = try row.decode(Data.self, UUID.self, Data.self)
            return (nonce, device, key)
        }
    }

    func user(_ userID: UUID) async throws -> UserResponse? {
        try await pool.withConnection { try await user(userID, on: $0) }
    }

    func user(_ userID: UUID, on connection: PostgresConnection) async throws -> UserResponse? {
        try await connection.query(
            """
            SELECT \(unescaped: Self.userColumns) FROM users WHERE user_id = \(userID)
            """
        ).first.map(Self.decodeUser)
    }

    /// The columns `decodeUser` reads, in its order.
    static let userColumns =
        "user_id, display_name, agreement_public_key, identity_public_key, identity_generation, recovery_public_key, recovery_binding"

    /// A user row as `userColumns`.
    static func decodeUser(_ row: PostgresRow) throws -> UserResponse {
        let (id, name, agreement, identity, generation, recovery, binding) = try row.decode(
            UUID.self, String.self, Data.self, Data.self, Int.self, Data?.self, Data?.self)
        return UserResponse(
            userID: id, displayName: name, agreementPublicKey: agreement, identityPublicKey: identity,
            identityGeneration: generation, recoveryPublicKey: recovery, recoveryBinding: binding)
    }

    func device(_ deviceID: UUID) async throws -> DeviceResponse? {
        try await pool.withConnection { try await device(deviceID, on: $0) }
    }

    private func device(_ deviceID: UUID, on connection: PostgresConnection) async throws -> DeviceResponse? {
        try await connection.query(
            """
            SELECT \(unescaped: Self.deviceColumns) FROM devices WHERE device_id = \(deviceID)
            """
        ).first.map(Self.decodeDevice)
    }

    func devices(ofUser userID: UUID) async throws -> [DeviceResponse] {
        try await pool.withConnection { connection in
            try await connection.query(
                """
                SELECT \(unescaped: Self.deviceColumns) FROM devices WHERE user_id = \(userID)
                ORDER BY registered_at, device_id
                """
            ).map(Self.decodeDevice)
        }
    }

    private static let deviceColumns =
        "device_id, user_id, name, kind, role, signing_public_key, registered_at, last_used_at, retired_at, certificate"

    private static func decodeDevice(_ row: PostgresRow) throws -> DeviceResponse {
        let (id, user, name, kind, role, key, registered, lastUsed, retired, certificate) = try row.decode(
            UUID.self, UUID.self, String.self, String?.self, String.self, Data.self, Date.self, Date?.self, Date?.self, Data?.self)
        return DeviceResponse(
            deviceID: id, userID: user, name: name, kind: kind.flatMap(DeviceKind.init(rawValue:)),
            role: DeviceRole(rawValue: role) ?? .agent, signingPublicKey: key, registeredAt: registered, lastUsedAt: lastUsed,
            retiredAt: retired, certificate: try certificate.map { try CanonicalJSON.decode(DeviceCertificate.self, from: $0) })
    }

    /// Keeps the recovery key's certificate of the calling device, which also vouches for it: a
    /// device the recovery words certified governs from its enrolment, as one they enrolled.
    /// - Throws: 422 `bad_signature` unless the certificate names this device, its registered key
    ///   and its user, signed by the user's current recovery key; 401 for a retired device.
    func certify(_ certificate: DeviceCertificate, for caller: AuthenticatedDevice) async throws {
        try await pool.transaction { connection in
            guard let row = try await connection.query(
                """
                SELECT d.signing_public_key, u.recovery_public_key FROM devices d JOIN users u ON u.user_id = d.user_id
                WHERE d.device_id = \(caller.deviceID) AND d.user_id = \(caller.userID) AND d.retired_at IS NULL FOR UPDATE OF d
                """
            ).first else { throw APIError.deviceRetired }
            let (deviceKey, recoveryKey) = try row.decode(Data.self, Data?.self)
            guard certificate.deviceID == caller.deviceID, certificate.devicePublicKey == deviceKey,
                certificate.isValid(recoveryKey: recoveryKey, userID: caller.userID)
            else {
                throw APIError.unprocessable(
                    "bad_signature", "a device certificate must name this device and its key, signed by your current recovery key")
            }
            try await connection.execute(
                """
                UPDATE devices SET certificate = \(try CanonicalJSON.encode(certificate)), governs_from = least(governs_from, registered_at)
                WHERE device_id = \(caller.deviceID)
                """)
        }
    }

    /// Retires a device of `userID` and, in the same transaction, deletes its tokens and its
    /// open authentication and enrolment challenges (its next call is a 401) and abandons the
    /// revocation and rotation stagings it began (migration 0017): a device the thief holds, once
    /// retired, blocks nothing, and an honest user whose device died mid-revocation frees the
    /// family member at once by retiring it. Provisional enrolments follow it (`retire`).
    func retireDevice(_ deviceID: UUID, by userID: UUID, from callerDeviceID: UUID) async throws {
        try await pool.transaction { connection in
            // Both rows, locked in one order: of two devices retiring each other at once, the
            // second finds itself retired. A request authenticated just before its own device
            // was retired acts on nothing.
            let rows = try await connection.query(
                """
                SELECT device_id, user_id, retired_at IS NULL FROM devices
                WHERE device_id IN (\(deviceID), \(callerDeviceID)) ORDER BY device_id FOR UPDATE
                """
            ).map { try $0.decode(UUID.self, UUID.self, Bool.self) }
            guard rows.contains(where: { $0.0 == callerDeviceID && $0.1 == userID && $0.2 }) else { throw APIError.deviceRetired }
            guard let owner = rows.first(where: { $0.0 == deviceID })?.1 else {
                throw APIError.notFound("device")
            }
            guard owner == userID else { throw APIError.forbidden("only the device's user can retire it") }
            if deviceID != callerDeviceID { try await GovernanceStore.refuseIfFrozen(callerDeviceID, on: connection) }
            try await Self.retire(deviceID, of: userID, by: callerDeviceID, outbox: outbox, on: connection)
        }
    }

    /// The retirement itself, on a locked device row, and its announcement: retired, its tokens
    /// and open challenges deleted, the stagings it began abandoned, its pending operations
    /// withdrawn.
    ///
    /// Enrolments are provisional until the enrolled device governs (a security delay after an
    /// enrolment by another device): retiring a provisional device vetoes its enrolment and
    /// freezes the device that enrolled it (unless that is `actor`), and the provisional devices
    /// this one enrolled are retired with it (but `actor`) — a device a thief enrols from a stolen
    /// phone goes with the phone. An honest device enrolled by the stolen one within the delay
    /// goes too, unless it is the one retiring: the recovery key restores it.
    /// - Parameter actor: the device that retires it; `nil` for the recovery key.
    static func retire(
        _ deviceID: UUID, of userID: UUID, by actor: UUID?, outbox: OutboxWriter, on connection: PostgresConnection
    ) async throws {
        try await connection.execute(
            """
            UPDATE devices SET frozen_at = coalesce(frozen_at, now())
            WHERE device_id = (
                SELECT enrolled_by FROM devices WHERE device_id = \(deviceID) AND retired_at IS NULL AND governs_from > now())
              AND device_id IS DISTINCT FROM \(actor) AND retired_at IS NULL
            """)
        try await retireWithProvisional(deviceID, of: userID, by: actor, outbox: outbox, on: connection)
    }

    private static func retireWithProvisional(
        _ deviceID: UUID, of userID: UUID, by actor: UUID?, outbox: OutboxWriter, on connection: PostgresConnection
    ) async throws {
        let provisional = try await connection.query(
            """
            SELECT device_id FROM devices
            WHERE enrolled_by = \(deviceID) AND retired_at IS NULL AND governs_from > now()
              AND device_id IS DISTINCT FROM \(actor)
            FOR UPDATE
            """
        ).map { try $0.decode(UUID.self, column: 0) }
        // Retiring a retired device again changes nothing, and is announced once only.
        let newlyRetired = try await connection.query(
            "UPDATE devices SET retired_at = now() WHERE device_id = \(deviceID) AND retired_at IS NULL RETURNING 1"
        ).first != nil
        try await connection.execute("DELETE FROM auth_tokens WHERE device_id = \(deviceID)")
        try await connection.execute("DELETE FROM auth_challenges WHERE device_id = \(deviceID)")
        try await connection.execute("DELETE FROM enrolment_challenges WHERE device_id = \(deviceID)")
        try await RecordBodies.abandonStagings(begunBy: deviceID, on: connection)
        try await GovernanceStore.withdraw(initiatedBy: deviceID, outbox: outbox, on: connection)
        if newlyRetired {
            try await outbox.announce(
                GovernanceNotice(.retireDevice, device: deviceID, of: userID, actor: actor), sparing: actor, alsoTo: deviceID,
                on: connection)
        }
        for device in provisional {
            try await retireWithProvisional(device, of: userID, by: actor, outbox: outbox, on: connection)
        }
    }

    // MARK: Authentication

    /// A one-time challenge for an active device, of which at most `openAtMost` are kept: the
    /// device's expired and spent ones are purged, and the oldest open ones make room for this
    /// one. An anonymous flood for a device id so stores at most `openAtMost` rows, and the
    /// device's own next challenge still works (refusing past the cap would lock it out).
    /// - Returns: the challenge, and how many open challenges it replaced.
    func createChallenge(
        deviceID: UUID, nonce: Data, lifetime: Duration, openAtMost: Int
    ) async throws -> (challenge: ChallengeResponse, replaced: Int) {
        try await pool.transaction { connection in
            // The device row, locked against concurrent challenges for it (the cap is per device).
            let device = try await connection.query(
                "SELECT retired_at IS NOT NULL FROM devices WHERE device_id = \(deviceID) FOR NO KEY UPDATE")
            // A retired device is told so (401, as every other call it makes): it can never
            // authenticate again. An unknown one is simply not found.
            guard let retired = try device.first?.decode(Bool.self, column: 0) else { throw APIError.notFound("active device") }
            if retired { throw APIError.deviceRetired }
            try await connection.execute(
                "DELETE FROM auth_challenges WHERE device_id = \(deviceID) AND (used_at IS NOT NULL OR expires_at <= now())")
            let replaced = try await connection.execute(
                """
                DELETE FROM auth_challenges WHERE challenge_id IN (
                    SELECT challenge_id FROM auth_challenges WHERE device_id = \(deviceID)
                    ORDER BY expires_at DESC, challenge_id OFFSET \(max(0, openAtMost - 1)))
                """)
            let challengeID = UUID()
            let expiresAt = try await connection.query(
                """
                INSERT INTO auth_challenges (challenge_id, device_id, nonce, expires_at)
                VALUES (\(challengeID), \(deviceID), \(nonce), now() + make_interval(secs => \(lifetime.wholeSeconds)))
                RETURNING expires_at
                """
            ).first!.decode(Date.self, column: 0)
            return (ChallengeResponse(challengeID: challengeID, nonce: nonce, expiresAt: expiresAt), replaced)
        }
    }

    /// Consumes a challenge (whatever the outcome, it cannot be answered twice) and
    /// returns what the answer must be checked against.
    func redeemChallenge(_ challengeID: UUID, deviceID: UUID) async throws -> (nonce: Data, signingKey: Data, userID: UUID)? {
        try await pool.withConnection { connection in
            let rows = try await connection.query(
                """
                UPDATE auth_challenges c SET used_at = now()
                FROM devices d
                WHERE c.challenge_id = \(challengeID) AND c.device_id = \(deviceID) AND d.device_id = c.device_id
                  AND c.used_at IS NULL AND c.expires_at > now() AND d.retired_at IS NULL
                RETURNING c.nonce, d.signing_public_key, d.user_id
                """)
            guard let row = rows.first else { return nil }
            let (nonce, key, user) = try row.decode(Data.self, Data.self, UUID.self)
            return (nonce, key, user)
        }
    }

    func storeToken(hash: Data, deviceID: UUID, userID: UUID, lifetime: Duration) async throws -> Date {
        try await pool.withConnection { connection in
            try await connection.query(
                """
                INSERT INTO auth_tokens (token_hash, device_id, user_id, expires_at)
                VALUES (\(hash), \(deviceID), \(userID), now() + make_interval(secs => \(lifetime.wholeSeconds)))
                RETURNING expires_at
                """
            ).first!.decode(Date.self, column: 0)
        }
    }

    /// The device a token hash belongs to, if the token is unexpired and the device active;
    /// notes the device's last use when the one recorded is a minute old or more (one
    /// statement, and at most one row write a minute per device).
    func authenticate(tokenHash: Data) async throws -> AuthenticatedDevice? {
        try await pool.withConnection { connection in
            let rows = try await connection.query(
                """
                WITH caller AS (
                    SELECT t.user_id, t.device_id FROM auth_tokens t JOIN devices d USING (device_id)
                    WHERE t.token_hash = \(tokenHash) AND t.expires_at > now() AND d.retired_at IS NULL
                ), used AS (
                    UPDATE devices d SET last_used_at = now() FROM caller
                    WHERE d.device_id = caller.device_id
                      AND (d.last_used_at IS NULL OR d.last_used_at < now() - interval '1 minute')
                )
                SELECT user_id, device_id FROM caller
                """)
            guard let row = rows.first else { return nil }
            let (user, device) = try row.decode(UUID.self, UUID.self)
            return AuthenticatedDevice(userID: user, deviceID: device)
        }
    }
}

