import Foundation
import RescindCrypto
import RescindProtocol
import RescindTestSupport
import Testing

@testable import GrantService
@testable import RescindClient

/// A thief holds a copy of the owner's unlocked phone — keystore, what opens it, a live token —
/// and acts first. An identity rotation or an ownership transfer from one device no longer takes
/// effect at once: it waits for the security delay, the owner's other devices see it, and one of
/// them (or the recovery key) stops it. The owner keeps Emma.
@Suite(.serialized) struct GovernedOperationTests {
    struct Owner {
        let phone: UserSession  // the device the thief copied
        let iPad: UserSession
        let grantee: UserSession
        let emma: UUID
        let records: [UUID: [UInt8]]
        var userID: UUID { phone.keys.userID }
    }

    /// Adult A with a phone and an iPad they have had for months, Emma's records, shared with B.
    static func owner(on service: GrantServiceHarness) async throws -> Owner {
        let phone = try await service.user("Adult A")
        let iPad = try await phone.addDevice(name: "Adult A's iPad", kind: .tablet, role: .interactive)
        try await service.ageEnrolments(of: phone.keys.userID)
        let grantee = try await service.user("Adult B")
        let (emma, fmk) = try await phone.createFamilyMember()
        for text in ["blood type O+", "allergy: penicillin"] {
            _ = try await phone.putRecord(emma, plaintext: Array(text.utf8), fmk: fmk, version: 1)
        }
        try await phone.grant(emma, to: grantee.keys.userID)
        return Owner(phone: phone, iPad: iPad, grantee: grantee, emma: emma, records: try await phone.readRecords(emma))
    }

    /// The owner, after stopping the thief: rotates the identity with the recovery key from
    /// `device`, moves their copies, and rotates Emma's FMK. Every record reads; nothing the
    /// stolen phone held opens what was written afterwards.
    /// - Returns: the session on `device` with the new keys.
    @discardableResult
    static func recover(_ owner: Owner, on device: UserSession, stolenFMK: SecretKey, service: GrantServiceHarness) async throws -> UserSession {
        let me = try await device.client.me()
        let newKeys = UserKeys.generate(userID: owner.userID)
        let applied = try await device.rotateIdentityAtOnce(to: newKeys, currentGeneration: me.user.identityGeneration)
        #expect(applied.state == .applied && applied.decidedBy == .recoveryKey)
        let rotated = device.withKeys(newKeys)
        try await rotated.rewrapHeldKeys(from: device.keys)
        let committed = try await rotated.rotate(owner.emma, reason: "owner's phone stolen")
        #expect(committed.newFMKVersion == 2)
        #expect(try await rotated.readRecords(owner.emma) == owner.records)
        #expect(try await owner.grantee.readRecords(owner.emma) == owner.records)
        for record in try await rotated.allRecords(owner.emma) {
            #expect(throws: (any Error).self) { try RecordCipher.open(record, fmk: stolenFMK) }
        }
        #expect(try await owner.grantee.client.user(owner.userID).identityPublicKey == Data(newKeys.identityKey.publicKey.rawRepresentation))
        await expectFailure(401) { try await owner.phone.client.me() }
        return rotated
    }

    @Test func theThiefsRotationWaitsAndTheOwnersIPadVetoesIt() async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await Self.owner(on: service)
            let thief = owner.phone
            let stolenFMK = try await thief.currentFMK(owner.emma).fmk

            // The thief moves first: a rotation to keys of its own. It is only pending.
            let thiefKeys = UserKeys.generate(userID: owner.userID)
            let begun = try await thief.registerRotation(to: thiefKeys, currentGeneration: 1)
            #expect(begun.state == .pending && begun.initiatedBy == thief.deviceID)
            #expect(begun.effectiveAt.timeIntervalSince(begun.receivedAt) >= 23 * 3600)
            let seenByB = try await owner.grantee.client.user(owner.userID)
            #expect(seenByB.identityGeneration == 1 && seenByB.identityPublicKey == Data(owner.phone.keys.identityKey.publicKey.rawRepresentation))

            // It cannot approve its own operation, nor through a device it enrols now.
            await expectFailure(403, "not_a_second_device") { try await thief.client.approveOperation(begun.operationID) }
            let accomplice = try await thief.addDevice(name: "thief's laptop")
            await expectFailure(403, "not_a_second_device") { try await accomplice.client.approveOperation(begun.operationID) }
            await expectFailure(403, "not_a_second_device") { try await accomplice.client.vetoOperation(begun.operationID) }

            // The owner's iPad sees it at once, and vetoes it: the phone is frozen.
            let seen = try await owner.iPad.client.governedOperations()
            #expect(seen.map(\.operationID) == [begun.operationID] && seen[0].state == .pending)
            let vetoed = try await owner.iPad.client.vetoOperation(begun.operationID)
            #expect(vetoed.state == .vetoed && vetoed.decidedBy == .device && vetoed.decidedByDevice == owner.iPad.deviceID)

            // The frozen phone can change nothing about who the owner is.
            await expectFailure(403, "device_frozen") {
                try await thief.registerRotation(to: UserKeys.generate(userID: owner.userID), currentGeneration: 1)
            }
            await expectFailure(403, "device_frozen") { try await thief.client.retireDevice(owner.iPad.deviceID) }
            await expectFailure(403, "device_frozen") { try await thief.addDevice(name: "another") }
            await expectFailure(403) { try await thief.client.clearDevice(thief.deviceID) }
            await expectFailure(409, "operation_decided") { try await accomplice.client.cancelOperation(begun.operationID) }
            // However long the thief waits, the vetoed rotation never takes effect.
            let later = try await service.elapseSecurityDelay(of: owner.userID, listingWith: owner.iPad)
            #expect(later.first?.state == .vetoed)
            #expect(try await owner.grantee.client.user(owner.userID).identityGeneration == 1)

            // The owner shuts the phone and the accomplice's device out, and recovers.
            try await owner.iPad.client.retireDevice(thief.deviceID)
            try await owner.iPad.client.retireDevice(accomplice.deviceID)
            try await Self.recover(owner, on: owner.iPad, stolenFMK: stolenFMK, service: service)
        }
    }

    @Test func theThiefRetiresTheIPadFirstAndTheRecoveryKeyAloneTakesEverythingBack() async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await Self.owner(on: service)
            let thief = owner.phone
            let stolenFMK = try await thief.currentFMK(owner.emma).fmk

            // Retiring another device stays immediate; then a rotation nobody is left to veto.
            try await thief.client.retireDevice(owner.iPad.deviceID)
            await expectFailure(401, "device_retired") { try await owner.iPad.client.me() }
            let begun = try await thief.registerRotation(to: UserKeys.generate(userID: owner.userID), currentGeneration: 1)

            // The owner, on a new laptop, with the recovery words alone: enrol it (it governs at
            // once), restore the iPad, retire the phone — which withdraws what it began.
            let recovery = try TestRecovery.key(for: owner.userID)
            let anonymous = GrantServiceClient(baseURL: service.baseURL, tls: service.clientTLS)
            let (laptopID, laptopKey) = try await recovery.enrolNewDevice(
                of: owner.userID, name: "Adult A's new laptop", kind: .laptop, through: anonymous)
            try await recovery.order(.restore, for: owner.userID, deviceID: owner.iPad.deviceID, through: anonymous)
            try await recovery.order(.retire, for: owner.userID, deviceID: thief.deviceID, through: anonymous)
            let laptop = UserSession(
                keys: owner.iPad.keys, deviceID: laptopID, deviceKey: laptopKey, baseURL: service.baseURL, tls: service.clientTLS)
            let withdrawn = try #require(try await laptop.client.governedOperations().first)
            #expect(withdrawn.operationID == begun.operationID && withdrawn.state == .withdrawn && withdrawn.decidedBy == .retirement)
            #expect(try await service.elapseSecurityDelay(of: owner.userID, listingWith: laptop).first?.state == .withdrawn)

            try await Self.recover(owner, on: laptop, stolenFMK: stolenFMK, service: service)
            _ = try await owner.iPad.client.me()  // restored
        }
    }

    /// The thief hands Emma to an accomplice's account (granting it first, which a device may do
    /// at once): the transfer only waits, the iPad vetoes it, and Emma stays the owner's.
    @Test func theThiefsTransferToAnAccompliceIsVetoed() async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await Self.owner(on: service)
            let thief = owner.phone
            let accomplice = try await service.user("Accomplice")
            try await thief.grant(owner.emma, to: accomplice.keys.userID)
            let begun = try await thief.transferOwnership(owner.emma, to: accomplice.keys.userID)
            #expect(begun.state == .pending && begun.kind == .transferOwnership && begun.transfer?.familyMemberID == owner.emma)
            #expect(try await accomplice.client.familyMember(owner.emma).ownerUserID == owner.userID)
            await expectFailure(422, "invalid_wrapping") { try await accomplice.adoptOwnership(owner.emma) }

            let seen = try #require(try await owner.iPad.client.governedOperations().first)
            #expect(seen.operationID == begun.operationID && seen.transfer?.newOwnerUserID == accomplice.keys.userID)
            #expect(try await owner.iPad.client.vetoOperation(begun.operationID).state == .vetoed)
            await expectFailure(403, "device_frozen") { try await thief.transferOwnership(owner.emma, to: accomplice.keys.userID) }
            #expect(try await service.elapseSecurityDelay(of: owner.userID, listingWith: owner.iPad).first?.state == .vetoed)
            #expect(try await accomplice.client.familyMember(owner.emma).ownerUserID == owner.userID)

            // The owner retires the phone and revokes the accomplice; Emma reads as before.
            try await owner.iPad.client.retireDevice(thief.deviceID)
            _ = try await owner.iPad.revoke(owner.emma, user: accomplice.keys.userID, reason: "granted by a thief")
            #expect(try await owner.iPad.readRecords(owner.emma) == owner.records)
            await expectFailure(403) { try await accomplice.client.wrappedKey(owner.emma) }
        }
    }

    /// A transfer the key history moved past before it was approved is superseded, and nothing
    /// of it is applied.
    @Test func aTransferTheHistoryMovedPastIsSuperseded() async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await Self.owner(on: service)
            let begun = try await owner.phone.transferOwnership(owner.emma, to: owner.grantee.keys.userID)
            let stranger = try await service.user("Adult C")
            try await owner.phone.grant(owner.emma, to: stranger.keys.userID)  // the head moves on
            let decided = try await TestRecovery.key(for: owner.userID).order(
                .approve, for: owner.userID, operationID: begun.operationID, transfer: begun.transfer?.statement, through: owner.phone.client)
            #expect(decided.operation?.state == .superseded)
            #expect(try await owner.iPad.client.familyMember(owner.emma).ownerUserID == owner.userID)
            let kinds = try await owner.iPad.client.keyStatements(owner.emma, after: 0).statements.map(\.statement.kind)
            #expect(kinds == [.create, .grant, .grant])
        }
    }

    /// The recovery key cancels what the thief began, clears a device a thief's veto froze, and
    /// vouches for a device set up today so that it can veto at once.
    @Test func theRecoveryKeyCancelsAndClears() async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await Self.owner(on: service)
            let recovery = try TestRecovery.key(for: owner.userID)
            // The owner's iPad begins an honest rotation; the thief's phone vetoes it first.
            let honest = try await owner.iPad.registerRotation(to: UserKeys.generate(userID: owner.userID), currentGeneration: 1)
            _ = try await owner.phone.client.vetoOperation(honest.operationID)
            await expectFailure(403, "device_frozen") { try await owner.iPad.client.retireDevice(owner.phone.deviceID) }
            // The recovery key clears the iPad, which retires the phone; the thief's next rotation is cancelled by the key.
            try await recovery.order(.clear, for: owner.userID, deviceID: owner.iPad.deviceID, through: owner.iPad.client)
            let thiefsOwn = try await owner.phone.registerRotation(to: UserKeys.generate(userID: owner.userID), currentGeneration: 1)
            let cancelled = try await recovery.order(.cancel, for: owner.userID, operationID: thiefsOwn.operationID, through: owner.iPad.client)
            #expect(cancelled.operation?.state == .cancelled && cancelled.operation?.decidedBy == .recoveryKey)
            try await owner.iPad.client.retireDevice(owner.phone.deviceID)
            #expect(try await owner.grantee.client.user(owner.userID).identityGeneration == 1)

            // A laptop set up today cannot veto yet; the recovery key vouches for it, and it can.
            let laptop = try await owner.iPad.addDevice(name: "Adult A's new laptop")
            let next = try await owner.iPad.registerRotation(to: UserKeys.generate(userID: owner.userID), currentGeneration: 1)
            await expectFailure(403, "not_a_second_device") { try await laptop.client.vetoOperation(next.operationID) }
            try await recovery.order(.vouch, for: owner.userID, deviceID: laptop.deviceID, through: laptop.client)
            #expect(try await laptop.client.vetoOperation(next.operationID).state == .vetoed)
            await expectFailure(404) { try await recovery.order(.vouch, for: owner.userID, deviceID: owner.phone.deviceID, through: laptop.client) }
        }
    }

    /// An honest user with one device: the rotation takes effect when the delay runs out (the
    /// janitor applies it) and the device finishes moving its keys.
    @Test func anUnvetoedRotationTakesEffectAfterTheDelay() async throws {
        try await GrantServiceHarness.with({ $0.lifetimes.janitorInterval = .milliseconds(200) }) { service in
            let owner = try await Self.owner(on: service)
            let newKeys = UserKeys.generate(userID: owner.userID)
            let begun = try await owner.iPad.registerRotation(to: newKeys, currentGeneration: 1)
            try await service.withConnection { connection in
                try await connection.execute(
                    """
                    UPDATE governed_operations SET received_at = received_at - interval '25 hours',
                                                   effective_at = effective_at - interval '25 hours'
                    WHERE operation_id = \(begun.operationID)
                    """)
            }
            try await service.eventually("the janitor applies the rotation") {
                try await owner.grantee.client.user(owner.userID).identityGeneration == 2
            }
            let decided = try #require(try await owner.iPad.client.governedOperations().first)
            #expect(decided.state == .applied && decided.decidedBy == .delay)
            // A day has passed for the clients too: the rotation is older than the floor verifiers hold a rekey to.
            var rotated = owner.iPad.withKeys(newKeys)
            rotated.clock = { Date().addingTimeInterval(KeyStatement.minimumDelay + 60) }
            #expect(try await rotated.rewrapHeldKeys(from: owner.iPad.keys).rewrapped == 1)
            #expect(try await rotated.readRecords(owner.emma) == owner.records)
        }
    }

    /// Forged, misplaced and replayed decisions get a clear JSON error and change nothing.
    @Test func badDecisionsAreRefused() async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await Self.owner(on: service)
            let stranger = try await service.user("Adult C")
            let begun = try await owner.phone.registerRotation(to: UserKeys.generate(userID: owner.userID), currentGeneration: 1)
            let http = service.http
            let path = "v1/governance/operations/\(begun.operationID)"
            // Another user's device: not found, for every decision.
            let strangerToken = try await stranger.client.bearerToken()
            for verb in ["approve", "veto", "cancel"] {
                expectError(try await http.send("POST", "\(path)/\(verb)", token: strangerToken, json: [String: String]()), 404, "not_found")
            }
            expectError(try await http.send("POST", "v1/devices/\(owner.phone.deviceID)/clear", token: strangerToken, json: [String: String]()), 404, "not_found")
            // No token, a malformed id, an unknown operation.
            expectError(try await http.send("POST", "\(path)/veto", json: [String: String]()), 401)
            let iPadToken = try await owner.iPad.client.bearerToken()
            expectError(try await http.send("POST", "v1/governance/operations/not-a-uuid/veto", token: iPadToken, json: [String: String]()), 400)
            expectError(try await http.send("POST", "v1/governance/operations/\(UUID())/veto", token: iPadToken, json: [String: String]()), 404)
            // Only the device that began it cancels it.
            await expectFailure(403, "forbidden") { try await owner.iPad.client.cancelOperation(begun.operationID) }
            // A second rotation while one is pending.
            await expectFailure(409, "operation_pending") {
                try await owner.iPad.registerRotation(to: UserKeys.generate(userID: owner.userID), currentGeneration: 1)
            }
            // The recovery key of another user, and a replayed recovery order.
            let anonymous = GrantServiceClient(baseURL: service.baseURL, tls: service.clientTLS)
            let challenge = try await anonymous.recoveryChallenge(for: owner.userID)
            let action = RecoveryAction(userID: owner.userID, challengeID: challenge.challengeID, kind: .approve, operationID: begun.operationID)
            let forged = SignedRecoveryAction(
                action: action,
                signature: Data(try TestRecovery.key(for: stranger.keys.userID).signingKey.signature(for: try action.signingInput(nonce: challenge.nonce))))
            await expectFailure(422, "bad_signature") { try await anonymous.recoveryAction(forged) }
            await expectFailure(422, "invalid_field") {
                try await TestRecovery.key(for: owner.userID).order(.approve, for: owner.userID, deviceID: owner.phone.deviceID, through: anonymous)
            }
            // A veto from a retired device (enrolled and retired by the iPad: no enrolment vetoed).
            let retiredTablet = try await owner.iPad.addDevice(name: "old tablet")
            _ = try await retiredTablet.client.me()
            try await owner.iPad.client.retireDevice(retiredTablet.deviceID)
            await expectFailure(401) { try await retiredTablet.client.vetoOperation(begun.operationID) }

            // Nothing changed: still pending, nobody frozen, the same keys.
            let still = try #require(try await owner.iPad.client.governedOperations().first)
            #expect(still.state == .pending)
            #expect(try await service.withConnection { try await $0.query("SELECT count(*) FROM devices WHERE frozen_at IS NOT NULL").first!.decode(Int.self, column: 0) } == 0)
            #expect(try await stranger.client.user(owner.userID).identityGeneration == 1)

            // Decided once (vetoed by the iPad), it cannot be decided again, by a device or the key.
            _ = try await owner.iPad.client.vetoOperation(begun.operationID)
            await expectFailure(409, "operation_decided") { try await owner.iPad.client.approveOperation(begun.operationID) }
            await expectFailure(409, "operation_decided") {
                try await TestRecovery.key(for: owner.userID).order(.approve, for: owner.userID, operationID: begun.operationID, through: anonymous)
            }
            #expect(try await stranger.client.user(owner.userID).identityGeneration == 1)
        }
    }

    @Test func theSecurityDelayIsNeverBelowAnHour() throws {
        #expect(GrantServiceConfiguration().lifetimes.securityDelay == .seconds(86_400))
        #expect(try GrantServiceConfiguration(environment: ["RESCIND_SECURITY_DELAY_SECONDS": "3600"]).lifetimes.securityDelay == .seconds(3600))
        #expect(throws: (any Error).self) { try GrantServiceConfiguration(environment: ["RESCIND_SECURITY_DELAY_SECONDS": "3599"]) }
    }
}

/// The recovery key decides everything at once, so setting one is governed like a rotation.
extension GovernedOperationTests {
    /// The thief sets a recovery key of its own from the stolen phone, to approve its own
    /// rotation with it: the change only waits, the thief's key approves nothing meanwhile, and
    /// the owner's iPad vetoes it.
    @Test func theThiefsOwnRecoveryKeyWaitsApprovesNothingAndIsVetoed() async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await Self.owner(on: service)
            let thiefsKey = try RecoveryKey.generate()
            let begun = try await owner.phone.setRecoveryKey(thiefsKey)
            #expect(begun.state == .pending && begun.kind == .setRecovery)
            #expect(begun.recoveryKeyChange?.recoveryPublicKey == thiefsKey.publicKey)
            #expect(begun.recoveryKeyChange?.previousRecoveryPublicKey == (try TestRecovery.key(for: owner.userID)).publicKey)

            let rotation = try await owner.phone.registerRotation(to: UserKeys.generate(userID: owner.userID), currentGeneration: 1)
            let anonymous = GrantServiceClient(baseURL: service.baseURL, tls: service.clientTLS)
            await expectFailure(422, "bad_signature") {
                try await thiefsKey.order(.approve, for: owner.userID, operationID: rotation.operationID, through: anonymous)
            }
            let vetoed = try await owner.iPad.client.vetoOperation(begun.operationID)
            #expect(vetoed.state == .vetoed)
            _ = try await owner.iPad.client.vetoOperation(rotation.operationID)

            // The delay runs out: nothing of it applies; the owner's words are still the key.
            let after = try await service.elapseSecurityDelay(of: owner.userID, listingWith: owner.iPad)
            #expect(after.allSatisfy { $0.state == .vetoed })
            #expect(try await owner.iPad.client.me().user.recoveryPublicKey == (try TestRecovery.key(for: owner.userID)).publicKey)
        }
    }

    /// An identity made without a recovery key gets one (approved by a second device), then
    /// replaces it with the old words' approval; a change made for a state that moved on, one not
    /// signed by its key, and one naming another key of the user's are refused and change nothing.
    @Test func aRecoveryKeyIsAddedThenReplacedAndBadChangesAreRefused() async throws {
        try await GrantServiceHarness.with { service in
            let phone = try await UserSession.register(
                keys: .generate(), displayName: "Adult E", deviceName: "Adult E's phone", baseURL: service.baseURL, tls: service.clientTLS)
            let laptop = try await phone.addDevice(name: "Adult E's laptop", kind: .laptop)
            try await service.ageEnrolments(of: phone.keys.userID)
            let userID = phone.keys.userID
            #expect(try await phone.client.me().user.recoveryPublicKey == nil)

            let first = try RecoveryKey.generate()
            let added = try await phone.setRecoveryKey(first)
            #expect(added.recoveryKeyChange?.previousRecoveryPublicKey == nil)
            #expect(try await laptop.client.approveOperation(added.operationID).state == .applied)
            #expect(try await phone.client.me().user.recoveryPublicKey == first.publicKey)

            let second = try RecoveryKey.generate()
            let replaced = try await laptop.setRecoveryKey(second)
            let anonymous = GrantServiceClient(baseURL: service.baseURL, tls: service.clientTLS)
            let approved = try await first.order(.approve, for: userID, operationID: replaced.operationID, through: anonymous)
            #expect(approved.operation?.state == .applied && approved.operation?.decidedBy == .recoveryKey)
            #expect(try await phone.client.me().user.recoveryPublicKey == second.publicKey)
            await expectFailure(422, "bad_signature") {
                try await first.order(.retire, for: userID, deviceID: phone.deviceID, through: anonymous)
            }

            // Bad changes: stale (names the first key), signed by another key, the identity key.
            func change(_ key: Data, previous: Data?, signer: Ed25519.PrivateKey) throws -> RecoveryKeyChange {
                let input = try RecoveryKeyChange.signingInput(userID: userID, recoveryPublicKey: key, previousRecoveryPublicKey: previous)
                return RecoveryKeyChange(
                    userID: userID, recoveryPublicKey: key, previousRecoveryPublicKey: previous, signature: Data(signer.signature(for: input)))
            }
            let third = try RecoveryKey.generate()
            await expectFailure(409, "stale_recovery_key") {
                try await phone.client.setRecoveryKey(try change(third.publicKey, previous: first.publicKey, signer: third.signingKey))
            }
            await expectFailure(422, "bad_signature") {
                try await phone.client.setRecoveryKey(try change(third.publicKey, previous: second.publicKey, signer: Ed25519.PrivateKey()))
            }
            let identity = Data(phone.keys.identityKey.publicKey.rawRepresentation)
            await expectFailure(422, "invalid_field") {
                try await phone.client.setRecoveryKey(try change(identity, previous: second.publicKey, signer: phone.keys.identityKey))
            }
            await expectFailure(403) {
                try await phone.client.setRecoveryKey(
                    RecoveryKeyChange(userID: UUID(), recoveryPublicKey: third.publicKey, previousRecoveryPublicKey: nil, signature: Data(count: 64)))
            }
            #expect(try await phone.client.governedOperations().filter { $0.state == .pending }.isEmpty)
            #expect(try await phone.client.me().user.recoveryPublicKey == second.publicKey)
        }
    }
}
