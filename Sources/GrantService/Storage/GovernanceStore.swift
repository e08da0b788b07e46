import Foundation
import RescindPostgres
import RescindProtocol
import RescindServiceSupport

/// Operations that change who a user is or what they own (an identity rotation, an ownership
/// transfer, a new recovery key), begun from one device: they wait for the security delay, and the user's other
/// devices and recovery key decide them meanwhile (`GovernedOperation`).
///
/// Who may decide: a device of the user that is active, not frozen, not the one that began the
/// operation, and governing since before the operation was received (`devices.governs_from`:
/// at once for a user's first device and for a device the recovery key enrolled, a security
/// delay after any other enrolment — a device the thief enrols cannot approve the thief's
/// operation). The recovery key decides anything (`RecoveryController`, the `…ByRecoveryKey` calls).
struct GovernanceStore: Sendable {
    let pool: PostgresConnectionPool
    let families: FamilyMemberStore
    let delay: Duration

    static let frozen = APIError(
        .forbidden, "device_frozen",
        "this device is frozen: another device of your user vetoed an operation it began; the recovery key or another device can clear it")

    // MARK: Beginning

    /// Receives an identity rotation (its signatures checked by the caller) as a pending
    /// operation, effective after the delay (and never before its `rekeyFloor`).
    /// - Throws: 401 `device_retired`, 403 `device_frozen`, 409 `stale_rotation` / `key_reused`
    ///   (as the rotation itself would), 409 `operation_pending` when one is already pending.
    func beginRotation(_ rotation: IdentityRotation, from caller: AuthenticatedDevice) async throws -> GovernedOperation {
        try await pool.transaction { connection in
            try await Self.lockGoverningDevice(caller.deviceID, of: caller.userID, on: connection)
            try await IdentityRotationStore.check(rotation.statement, on: connection)
            if let approvals = rotation.deviceApprovals {
                try await Self.checkBeginningApproval(approvals, of: try rotation.statement.signingInput(), by: caller, on: connection)
            }
            if rotation.recoveryBinding != nil {
                let recoveryKey = try await connection.query(
                    "SELECT recovery_public_key FROM users WHERE user_id = \(caller.userID)"
                ).first!.decode(Data?.self, column: 0)
                guard IdentityRotationStore.binding(rotation, recoveryKey: recoveryKey) != nil else {
                    throw APIError.unprocessable(
                        "bad_signature", "recovery_binding must be the new identity key's binding of the user's current recovery key")
                }
            }
            return try await insert(
                .rotateIdentity, subject: nil, body: try CanonicalJSON.encode(rotation), by: caller,
                notBefore: rotation.rekeyFloor, on: connection)
        }
    }

    /// Receives an ownership transfer, checked against every rule now (nothing applied), as a
    /// pending operation effective after the delay. A thief cannot hand a family member to an
    /// accomplice's account before the owner's other devices hear of it.
    /// - Throws: as the transfer itself would (403, 404, 409 `key_statement_stale`, 422), and as
    ///   `beginRotation` (401, 403 `device_frozen`, 409 `operation_pending` for this family member).
    ///
    /// The statement names its own delay (`not_before`, at least `KeyStatement.minimumDelay` after
    /// `issued_at`, which must be now): every verifier holds the transfer to it, so the operation
    /// takes effect no earlier than that, whatever this deployment's delay.
    func beginTransfer(_ transfer: OwnershipTransfer, from caller: AuthenticatedDevice) async throws -> GovernedOperation {
        let notBefore = try Self.checkTransferDelay(transfer.statement?.statement)
        try await families.checkTransfer(transfer, from: caller.userID)
        return try await pool.transaction { connection in
            try await Self.lockGoverningDevice(caller.deviceID, of: caller.userID, on: connection)
            if let signed = transfer.statement, let approvals = signed.deviceApprovals {
                try await Self.checkBeginningApproval(approvals, of: try signed.statement.signingInput(), by: caller, on: connection)
            }
            return try await insert(
                .transferOwnership, subject: transfer.familyMemberID, body: try CanonicalJSON.encode(transfer), by: caller,
                notBefore: notBefore, on: connection)
        }
    }

    /// A transfer statement issued now, naming a security delay verifiers accept. Returns its `not_before`.
    static func checkTransferDelay(_ statement: KeyStatement?, now: Date = Date()) throws -> Date? {
        guard let statement else { return nil }  // refused with the rest of the statement's checks
        guard abs(statement.issuedAt.timeIntervalSince(now)) <= KeyStatement.clockTolerance else {
            throw GrantRules.invalidKeyStatement("issued_at must be now (this service's clock is \(Timestamp.format(now)))")
        }
        guard let notBefore = statement.notBefore,
            notBefore.timeIntervalSince(statement.issuedAt) >= KeyStatement.minimumDelay
        else {
            throw GrantRules.invalidKeyStatement(
                "a transfer names not_before, at least \(Int(KeyStatement.minimumDelay)) seconds after issued_at (its security delay)")
        }
        return notBefore
    }

    /// Receives a new recovery key (its signature checked by the caller) as a pending operation,
    /// effective after the delay: a thief cannot replace the recovery key and then approve its own
    /// operations with it.
    /// - Throws: 409 `stale_recovery_key` when the key it replaces is not the user's current one,
    ///   422 `invalid_field` for a key that is the user's identity key or a device's, and as
    ///   `beginRotation` (401, 403 `device_frozen`, 409 `operation_pending`).
    func beginRecoveryKeyChange(_ change: RecoveryKeyChange, from caller: AuthenticatedDevice) async throws -> GovernedOperation {
        try await pool.transaction { connection in
            try await Self.lockGoverningDevice(caller.deviceID, of: caller.userID, on: connection)
            try await Self.checkRecoveryKeyChange(change, on: connection)
            if let binding = change.recoveryBinding {
                let identityKey = try await connection.query(
                    "SELECT identity_public_key FROM users WHERE user_id = \(change.userID)"
                ).first!.decode(Data.self, column: 0)
                guard RecoveryKeyBinding.isValid(
                    binding, userID: change.userID, identityPublicKey: identityKey, recoveryPublicKey: change.recoveryPublicKey)
                else {
                    throw APIError.unprocessable(
                        "bad_signature", "recovery_binding must be the current identity key's binding of the new recovery key")
                }
            }
            return try await insert(.setRecovery, subject: nil, body: try CanonicalJSON.encode(change), by: caller, on: connection)
        }
    }

    /// The change still applies to the user's state, and its key is nobody's other key.
    static func checkRecoveryKeyChange(_ change: RecoveryKeyChange, on connection: PostgresConnection) async throws {
        guard let row = try await connection.query(
            "SELECT recovery_public_key, identity_public_key FROM users WHERE user_id = \(change.userID) FOR UPDATE"
        ).first else { throw APIError.notFound("user") }
        let (current, identity) = try row.decode(Data?.self, Data.self)
        guard current == change.previousRecoveryPublicKey else {
            throw APIError.conflict(
                "stale_recovery_key", "previous_recovery_public_key is not the user's current recovery key (none, if it has none)")
        }
        let taken = try await connection.query(
            "SELECT 1 FROM devices WHERE signing_public_key = \(change.recoveryPublicKey)"
        ).first != nil
        guard change.recoveryPublicKey != identity, change.recoveryPublicKey != current, !taken else {
            throw APIError.unprocessable("invalid_field", "recovery_public_key must be a new key of its own")
        }
    }

    /// - Parameter notBefore: the earliest the change may take effect, if later than the delay's end.
    private func insert(
        _ kind: GovernedOperation.Kind, subject: UUID?, body: Data, by caller: AuthenticatedDevice, notBefore: Date? = nil,
        on connection: PostgresConnection
    ) async throws -> GovernedOperation {
        let operationID = UUID()
        do {
            try await connection.execute(
                """
                INSERT INTO governed_operations (operation_id, user_id, kind, subject, body, initiated_by, effective_at)
                VALUES (\(operationID), \(caller.userID), \(kind.rawValue), \(subject), \(PostgresJSON(bytes: [UInt8](body))),
                        \(caller.deviceID),
                        greatest(now() + make_interval(secs => \(delay.wholeSeconds)), \(notBefore)::timestamptz))
                """)
        } catch let error as PostgresError where error.isUniqueViolation {
            throw APIError.conflict(
                "operation_pending",
                "the same change is already pending for this user: approve, veto or cancel it first (rescind identity pending)")
        }
        let operation = try await Self.operation(operationID, of: caller.userID, on: connection)!
        try await families.outbox.announce(GovernanceNotice(operation, actor: caller.deviceID), sparing: caller.deviceID, on: connection)
        return operation
    }

    // MARK: Deciding, by a device

    /// A second device's approval: the operation takes effect now — an identity rotation at its
    /// `rekeyFloor`, if that is later: it stays pending until then, and can still be vetoed. Every
    /// device holds the identity key, so no verifier can tell this approval from the thief's: the
    /// family members the user owns follow the new key only from the floor on (or at once with the
    /// recovery key's signature), and the rotation waits for them rather than leave them behind —
    /// unless both devices are certified by the recovery key and say so with their own keys
    /// (`deviceApproval`, and the beginning device's in the rotation): two certified keys are two
    /// devices to every verifier, and the rotation takes effect at once.
    /// - Throws: 403 `not_a_second_device` (the caller began it, or governs only since after it
    ///   began); 422 `bad_signature` for a device approval that is not the caller's, certified.
    func approve(_ operationID: UUID, by caller: AuthenticatedDevice, deviceApproval: DeviceApproval? = nil) async throws -> GovernedOperation {
        try await pool.transaction { connection in
            var operation = try await Self.lockForDecision(operationID, by: caller, on: connection)
            if operation.kind == .transferOwnership {
                return try await approveTransfer(operation, by: caller, deviceApproval: deviceApproval, on: connection)
            }
            if let deviceApproval {
                guard var rotation = operation.rotation else {
                    throw APIError.unprocessable("invalid_field", "device_approval is for approving an identity rotation or ownership transfer only")
                }
                try await Self.checkApproval(deviceApproval, of: try rotation.statement.signingInput(), by: caller, on: connection)
                rotation.deviceApprovals = (rotation.deviceApprovals ?? []) + [deviceApproval]
                operation.rotation = rotation
                try await connection.execute(
                    "UPDATE governed_operations SET body = \(PostgresJSON(bytes: [UInt8](try CanonicalJSON.encode(rotation)))) WHERE operation_id = \(operationID)")
                // Two certified devices: every verifier takes the rotation at once, as with the recovery key's signature.
                if rotation.isCoSigned(by: try await Self.recoveryKey(of: caller.userID, on: connection)) {
                    return try await apply(operation, decidedBy: .device, device: caller.deviceID, on: connection)
                }
            }
            if let rotation = operation.rotation {
                // The database holds every operation an hour after it was received, too.
                let floor = max(rotation.rekeyFloor, operation.receivedAt + KeyStatement.minimumDelay)
                if floor > Date() {
                    try await connection.execute(
                        "UPDATE governed_operations SET effective_at = least(effective_at, \(floor)) WHERE operation_id = \(operationID)")
                    let approved = try await Self.operation(operationID, of: caller.userID, on: connection)!
                    try await families.outbox.announce(GovernanceNotice(approved, actor: caller.deviceID), sparing: nil, on: connection)
                    return approved
                }
            }
            return try await apply(operation, decidedBy: .device, device: caller.deviceID, on: connection)
        }
    }

    /// A second device approving a transfer: only with its certified approval, which with the
    /// beginning device's makes two certified by the recovery key the family member's history names
    /// (what every verifier checks); the transfer then takes effect at once. Otherwise refused, and
    /// nothing kept: every device holds the owner key, so a device's word alone is no approval.
    private func approveTransfer(
        _ operation: GovernedOperation, by caller: AuthenticatedDevice, deviceApproval: DeviceApproval?, on connection: PostgresConnection
    ) async throws -> GovernedOperation {
        guard let deviceApproval, var transfer = operation.transfer, var signed = transfer.statement else { throw Self.transferNeedsRecoveryKey }
        let input = try signed.statement.signingInput()
        try await Self.checkApproval(deviceApproval, of: input, by: caller, on: connection)
        signed.deviceApprovals = (signed.deviceApprovals ?? []) + [deviceApproval]
        guard signed.isApprovedAtOnce(under: try await KeyStatementStore.ownerRecoveryKey(transfer.familyMemberID, on: connection)) else {
            throw Self.transferNeedsRecoveryKey
        }
        transfer.statement = signed
        var approved = operation
        approved.transfer = transfer
        try await connection.execute(
            "UPDATE governed_operations SET body = \(PostgresJSON(bytes: [UInt8](try CanonicalJSON.encode(transfer)))) WHERE operation_id = \(operation.operationID)")
        return try await apply(approved, decidedBy: .device, device: caller.deviceID, on: connection)
    }

    /// The beginning device's own approval, alone (`checkApproval`).
    private static func checkBeginningApproval(
        _ approvals: [DeviceApproval], of statement: [UInt8], by caller: AuthenticatedDevice, on connection: PostgresConnection
    ) async throws {
        guard approvals.count == 1 else {
            throw APIError.unprocessable("invalid_field", "device_approvals: an operation is begun with the beginning device's approval alone")
        }
        try await checkApproval(approvals[0], of: statement, by: caller, on: connection)
    }

    /// Checks that `approval` is the calling device's own, over `statement`, with a certificate of
    /// its registered key by the user's current recovery key.
    /// - Throws: 422 `bad_signature` otherwise.
    private static func checkApproval(
        _ approval: DeviceApproval, of statement: [UInt8], by caller: AuthenticatedDevice, on connection: PostgresConnection
    ) async throws {
        let deviceKey = try await connection.query(
            "SELECT signing_public_key FROM devices WHERE device_id = \(caller.deviceID)"
        ).first?.decode(Data.self, column: 0)
        guard approval.certificate.deviceID == caller.deviceID, approval.certificate.devicePublicKey == deviceKey,
            approval.isValid(for: statement, recoveryKey: try await recoveryKey(of: caller.userID, on: connection), userID: caller.userID)
        else {
            throw APIError.unprocessable(
                "bad_signature",
                "a device approval must be this device's signature over the statement, with its certificate by your current recovery key")
        }
    }

    private static func recoveryKey(of userID: UUID, on connection: PostgresConnection) async throws -> Data? {
        try await connection.query("SELECT recovery_public_key FROM users WHERE user_id = \(userID)").first?.decode(Data?.self, column: 0)
    }

    /// Every device holds the owner key, so a second device's word is nothing a verifier of the
    /// family member's history could tell from the thief's: a transfer is approved by time, by the
    /// recovery key, or by two devices it certified, whose signatures the history carries.
    static let transferNeedsRecoveryKey = APIError(
        .conflict, "recovery_key_required",
        "an ownership transfer takes effect after its security delay, or at once with the recovery key "
            + "(rescind identity approve OP --words-file FILE), or approved here when this device and the one that began it "
            + "are both certified by the recovery key its history names (rescind identity certify); otherwise another device can veto it, not approve it")

    /// A veto: the operation never takes effect, and the device that began it is frozen.
    func veto(_ operationID: UUID, by caller: AuthenticatedDevice) async throws -> GovernedOperation {
        try await pool.transaction { connection in
            let operation = try await Self.lockForDecision(operationID, by: caller, on: connection)
            try await connection.execute(
                "UPDATE devices SET frozen_at = coalesce(frozen_at, now()) WHERE device_id = \(operation.initiatedBy)")
            return try await decide(operation, as: .vetoed, by: .device, device: caller.deviceID, on: connection)
        }
    }

    /// The initiator withdrawing its own operation (a frozen device may: it only gives up).
    func cancel(_ operationID: UUID, by caller: AuthenticatedDevice) async throws -> GovernedOperation {
        try await pool.transaction { connection in
            try await Self.lockActiveDevice(caller.deviceID, of: caller.userID, on: connection)
            let operation = try await Self.lockPending(operationID, of: caller.userID, on: connection)
            guard operation.initiatedBy == caller.deviceID else {
                throw APIError.forbidden("only the device that began an operation cancels it; another device vetoes it")
            }
            return try await decide(operation, as: .cancelled, by: .device, device: caller.deviceID, on: connection)
        }
    }

    /// Unfreezes another device of the caller's user.
    func clear(_ deviceID: UUID, by caller: AuthenticatedDevice) async throws {
        guard deviceID != caller.deviceID else { throw APIError.forbidden("a frozen device cannot clear itself") }
        try await pool.transaction { connection in
            try await Self.lockGoverningDevice(caller.deviceID, of: caller.userID, on: connection)
            try await Self.clear(deviceID, of: caller.userID, on: connection)
        }
    }

    // MARK: Deciding, by the recovery key (the caller checked its signature)

    /// - Parameter statementSignature: for a transfer, the recovery key's signature over its
    ///   statement, which the statement then carries (verifiers accept it before its delay only so);
    ///   for an identity rotation, over the rotation statement, kept with the rotation (verifiers
    ///   follow the owner's `rekey` statements at once only so).
    /// - Throws: 422 `bad_signature` when a transfer's or rotation's is missing or is not by `recoveryKey`; 409
    ///   `recovery_key_not_named` when the family member's history names another recovery key.
    func approveByRecoveryKey(
        _ operationID: UUID, userID: UUID, recoveryKey: Data, statementSignature: Data?
    ) async throws -> GovernedOperation {
        try await pool.transaction { connection in
            var operation = try await Self.lockPending(operationID, of: userID, on: connection)
            if operation.kind == .transferOwnership, let transfer = operation.transfer, var statement = transfer.statement {
                statement.recoverySignature = statementSignature
                guard statement.hasValidRecoverySignature(by: recoveryKey) else {
                    throw APIError.unprocessable(
                        "bad_signature", "approving a transfer takes statement_signature, the recovery key's signature over its key statement")
                }
                guard try await KeyStatementStore.ownerRecoveryKey(transfer.familyMemberID, on: connection) == recoveryKey else {
                    throw APIError.conflict(
                        "recovery_key_not_named",
                        "this family member's key history names another recovery key (or none) for its owner: the transfer waits for its delay")
                }
                operation.transfer?.statement = statement
            } else if operation.kind == .rotateIdentity, var rotation = operation.rotation {
                rotation.recoverySignature = statementSignature
                guard rotation.hasValidRecoverySignature(by: recoveryKey) else {
                    throw APIError.unprocessable(
                        "bad_signature",
                        "approving an identity rotation takes statement_signature, the recovery key's signature over the rotation statement")
                }
                operation.rotation = rotation
            } else if statementSignature != nil {
                throw APIError.unprocessable("invalid_field", "statement_signature is for approving an ownership transfer or identity rotation only")
            }
            return try await apply(operation, decidedBy: .recoveryKey, device: nil, on: connection)
        }
    }

    func cancelByRecoveryKey(_ operationID: UUID, userID: UUID) async throws -> GovernedOperation {
        try await pool.transaction { connection in
            let operation = try await Self.lockPending(operationID, of: userID, on: connection)
            return try await decide(operation, as: .cancelled, by: .recoveryKey, device: nil, on: connection)
        }
    }

    /// The recovery key vouches for an active device: it governs from its enrolment, as if the
    /// recovery key had enrolled it (an owner who set up a second device today need not wait a
    /// day before it can veto, even an operation begun since).
    func vouchByRecoveryKey(_ deviceID: UUID, userID: UUID) async throws {
        try await pool.withConnection { connection in
            guard try await connection.query(
                """
                UPDATE devices SET governs_from = least(governs_from, registered_at)
                WHERE device_id = \(deviceID) AND user_id = \(userID) AND retired_at IS NULL RETURNING 1
                """
            ).first != nil else { throw APIError.notFound("active device of this user") }
        }
    }

    func clearByRecoveryKey(_ deviceID: UUID, userID: UUID) async throws {
        try await pool.transaction { connection in try await Self.clear(deviceID, of: userID, on: connection) }
    }

    // MARK: Reading, and the delay running out

    /// The user's operations, newest first (the pending ones due by now applied first).
    func operations(of userID: UUID, limit: Int = 50) async throws -> [GovernedOperation] {
        try await applyDue(userID: userID)
        return try await pool.withConnection { connection in
            try await connection.query(
                "SELECT \(unescaped: Self.columns) FROM governed_operations WHERE user_id = \(userID) ORDER BY received_at DESC LIMIT \(limit)"
            ).map(Self.decode)
        }
    }

    /// Applies the pending operations whose delay ran out (the janitor's pass, and before a
    /// user's operations are listed).
    /// - Returns: how many were decided.
    @discardableResult
    func applyDue(userID: UUID? = nil) async throws -> Int {
        var decided = 0
        while true {
            let done = try await pool.transaction { connection -> Bool in
                guard let operation = try await connection.query(
                    """
                    SELECT \(unescaped: Self.columns) FROM governed_operations
                    WHERE state = 'pending' AND effective_at <= now() AND (\(userID)::uuid IS NULL OR user_id = \(userID))
                    ORDER BY effective_at LIMIT 1 FOR UPDATE SKIP LOCKED
                    """
                ).first.map(Self.decode) else { return true }
                _ = try await apply(operation, decidedBy: .delay, device: nil, on: connection)
                return false
            }
            if done { return decided }
            decided += 1
        }
    }

    /// Withdraws the pending operations a device began, in its retirement's transaction, and
    /// announces it: a stolen device, once retired, leaves nothing behind that takes effect later.
    static func withdraw(initiatedBy deviceID: UUID, outbox: OutboxWriter, on connection: PostgresConnection) async throws {
        let withdrawn = try await connection.query(
            """
            UPDATE governed_operations SET state = 'withdrawn', decided_by = 'retirement', decided_at = now()
            WHERE initiated_by = \(deviceID) AND state = 'pending'
            RETURNING \(unescaped: columns)
            """
        ).map(decode)
        for operation in withdrawn {
            try await outbox.announce(GovernanceNotice(operation, actor: nil), sparing: nil, on: connection)
        }
    }

    /// Refuses a frozen device's governance requests (begin, approve, veto, clear, enrol, retire).
    static func refuseIfFrozen(_ deviceID: UUID, on connection: PostgresConnection) async throws {
        if try await connection.query("SELECT 1 FROM devices WHERE device_id = \(deviceID) AND frozen_at IS NOT NULL").first != nil {
            throw frozen
        }
    }

    // MARK: Helpers

    private static let columns = """
        operation_id, user_id, kind, state, initiated_by, received_at, effective_at, decided_by, decided_by_device, decided_at, body
        """

    private static func decode(_ row: PostgresRow) throws -> GovernedOperation {
        let (id, user, kind, state, initiatedBy, receivedAt, effectiveAt, decidedBy, decidedByDevice, decidedAt, body) = try row.decode(
            UUID.self, UUID.self, String.self, String.self, UUID.self, Date.self, Date.self, String?.self, UUID?.self, Date?.self,
            PostgresJSON.self)
        guard let kind = GovernedOperation.Kind(rawValue: kind), let state = GovernedOperation.State(rawValue: state) else {
            throw PostgresError.invalidValue(GovernedOperation.self, type: .text, reason: "unknown kind or state")
        }
        return GovernedOperation(
            operationID: id, userID: user, kind: kind, state: state, initiatedBy: initiatedBy, receivedAt: receivedAt,
            effectiveAt: effectiveAt, decidedBy: decidedBy.flatMap(GovernedOperation.Decider.init(rawValue:)),
            decidedByDevice: decidedByDevice, decidedAt: decidedAt,
            rotation: kind == .rotateIdentity ? try body.decode(IdentityRotation.self, decoder: CanonicalJSON.decoder()) : nil,
            transfer: kind == .transferOwnership ? try body.decode(OwnershipTransfer.self, decoder: CanonicalJSON.decoder()) : nil,
            recoveryKeyChange: kind == .setRecovery ? try body.decode(RecoveryKeyChange.self, decoder: CanonicalJSON.decoder()) : nil)
    }

    private static func operation(_ operationID: UUID, of userID: UUID, on connection: PostgresConnection) async throws -> GovernedOperation? {
        try await connection.query(
            "SELECT \(unescaped: columns) FROM governed_operations WHERE operation_id = \(operationID) AND user_id = \(userID)"
        ).first.map(decode)
    }

    /// The pending operation, locked; 404 for another user's, 409 `operation_decided` for one
    /// no longer pending.
    private static func lockPending(_ operationID: UUID, of userID: UUID, on connection: PostgresConnection) async throws -> GovernedOperation {
        guard let operation = try await connection.query(
            """
            SELECT \(unescaped: columns) FROM governed_operations
            WHERE operation_id = \(operationID) AND user_id = \(userID) FOR UPDATE
            """
        ).first.map(decode) else { throw APIError.notFound("operation of this user") }
        guard operation.state == .pending else {
            throw APIError.conflict("operation_decided", "the operation is \(operation.state.rawValue), no longer pending")
        }
        return operation
    }

    /// The caller's device and the operation, locked, with the caller entitled to decide it.
    private static func lockForDecision(
        _ operationID: UUID, by caller: AuthenticatedDevice, on connection: PostgresConnection
    ) async throws -> GovernedOperation {
        let governsFrom = try await lockGoverningDevice(caller.deviceID, of: caller.userID, on: connection)
        let operation = try await lockPending(operationID, of: caller.userID, on: connection)
        guard operation.initiatedBy != caller.deviceID else {
            throw APIError(.forbidden, "not_a_second_device", "the device that began an operation cannot approve or veto it")
        }
        guard governsFrom <= operation.receivedAt else {
            throw APIError(
                .forbidden, "not_a_second_device",
                "this device was enrolled too recently to approve or veto: it governs from \(Timestamp.format(governsFrom))")
        }
        return operation
    }

    /// Share-locks the caller's device row (a retirement waits for this transaction) and checks
    /// it is active.
    private static func lockActiveDevice(_ deviceID: UUID, of userID: UUID, on connection: PostgresConnection) async throws {
        guard try await connection.query(
            "SELECT 1 FROM devices WHERE device_id = \(deviceID) AND user_id = \(userID) AND retired_at IS NULL FOR SHARE"
        ).first != nil else { throw APIError.deviceRetired }
    }

    /// As `lockActiveDevice`, and not frozen. - Returns: from when it governs.
    @discardableResult
    private static func lockGoverningDevice(_ deviceID: UUID, of userID: UUID, on connection: PostgresConnection) async throws -> Date {
        guard let row = try await connection.query(
            """
            SELECT frozen_at IS NOT NULL, governs_from FROM devices
            WHERE device_id = \(deviceID) AND user_id = \(userID) AND retired_at IS NULL FOR SHARE
            """
        ).first else { throw APIError.deviceRetired }
        let (isFrozen, governsFrom) = try row.decode(Bool.self, Date.self)
        guard !isFrozen else { throw frozen }
        return governsFrom
    }

    private static func clear(_ deviceID: UUID, of userID: UUID, on connection: PostgresConnection) async throws {
        guard try await connection.query(
            "UPDATE devices SET frozen_at = NULL WHERE device_id = \(deviceID) AND user_id = \(userID) RETURNING 1"
        ).first != nil else { throw APIError.notFound("device of this user") }
    }

    /// Records the decision and announces it.
    private func decide(
        _ operation: GovernedOperation, as state: GovernedOperation.State, by decider: GovernedOperation.Decider, device: UUID?,
        on connection: PostgresConnection
    ) async throws -> GovernedOperation {
        try await connection.execute(
            """
            UPDATE governed_operations
            SET state = \(state.rawValue), decided_by = \(decider.rawValue), decided_by_device = \(device), decided_at = now()
            WHERE operation_id = \(operation.operationID)
            """)
        let decided = try await Self.operation(operation.operationID, of: operation.userID, on: connection)!
        // Every device hears the decision, the deciding one too: each keeps what it was told is pending.
        try await families.outbox.announce(GovernanceNotice(decided, actor: device), sparing: nil, on: connection)
        return decided
    }

    /// Makes the operation take effect; one the state moved past meanwhile (another rotation came
    /// first, the family member's key history moved on, the new owner lost access) is `superseded`
    /// instead, with nothing of it applied (a savepoint undoes what it began).
    private func apply(
        _ operation: GovernedOperation, decidedBy decider: GovernedOperation.Decider, device: UUID?, on connection: PostgresConnection
    ) async throws -> GovernedOperation {
        try await connection.execute("SAVEPOINT governed_operation")
        do {
            switch operation.kind {
            case .rotateIdentity: _ = try await IdentityRotationStore.apply(operation.rotation!, on: connection)
            case .transferOwnership: _ = try await families.applyTransfer(operation.transfer!, from: operation.userID, on: connection)
            case .setRecovery:
                let change = operation.recoveryKeyChange!
                try await Self.checkRecoveryKeyChange(change, on: connection)
                // The binding was made by the identity key of the change's start: kept only if it
                // verifies under the user's current one (a rotation meanwhile leaves the key unbound).
                let identityKey = try await connection.query(
                    "SELECT identity_public_key FROM users WHERE user_id = \(change.userID)"
                ).first!.decode(Data.self, column: 0)
                let binding = change.recoveryBinding.flatMap {
                    RecoveryKeyBinding.isValid(
                        $0, userID: change.userID, identityPublicKey: identityKey, recoveryPublicKey: change.recoveryPublicKey) ? $0 : nil
                }
                try await connection.execute(
                    """
                    UPDATE users SET recovery_public_key = \(change.recoveryPublicKey), recovery_binding = \(binding)
                    WHERE user_id = \(change.userID)
                    """)
                // Certificates by the old key certify nothing now: the new words certify each device again.
                try await connection.execute("UPDATE devices SET certificate = NULL WHERE user_id = \(change.userID)")
            }
        } catch let refusal where refusal is APIError || refusal is RuleViolation {
            try await connection.execute("ROLLBACK TO SAVEPOINT governed_operation")
            return try await decide(operation, as: .superseded, by: decider, device: device, on: connection)
        }
        return try await decide(operation, as: .applied, by: decider, device: device, on: connection)
    }
}
