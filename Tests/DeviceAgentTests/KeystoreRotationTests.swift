import Foundation
import RescindClient
import RescindCrypto
import RescindPostgres
import RescindProtocol
import RescindTestSupport
import Synchronization
import Testing
import RescindTLS

@testable import DeviceAgent

/// Rotating a data directory's identity keys, killed at each step; and changing its passphrase.
@Suite("Identity rotation and passphrase change of an enrolled data directory", .serialized)
struct KeystoreRotationTests {
    /// Adult B, who holds Adult A's family member (one record), and an agent device of B's.
    static func grantee(
        on service: GrantServiceHarness
    ) async throws -> (b: UserSession, member: (id: UUID, rawFMK: [UInt8], records: [UUID: [UInt8]]), device: AgentTestKit.Device) {
        let owner = try await service.user("Adult A")
        let b = try await service.user("Adult B")
        let member = try await AgentTestKit.familyMember(ownedBy: owner, records: ["blood type O+"])
        try await owner.grant(member.id, to: b.keys.userID)
        return (b, member, try await AgentTestKit.enrol(b, on: service))
    }

    @Test("a rotation moves every copy to new keys; the old keys open nothing served afterwards")
    func rotate() async throws {
        try await GrantServiceHarness.with { service in
            let (b, member, device) = try await Self.grantee(on: service)
            defer { device.directory.remove() }

            // Begun from this device alone, the rotation waits for the security delay: the new keys
            // wait beside the old ones, which stay in use; run again, it is still pending.
            let begun = try await KeystoreRotation.rotateIdentity(configuration: device.configuration)
            #expect(begun.pending?.state == .pending && begun.generation == 1 && begun.rewrapped == 0)
            #expect(FileManager.default.fileExists(atPath: KeystoreRotation.pendingPath(device.configuration)))
            let waiting = try await DeviceIdentity.session(configuration: device.configuration)
            #expect(waiting.keys.identityKey.publicKey == b.keys.identityKey.publicKey)
            let again = try await KeystoreRotation.rotateIdentity(configuration: device.configuration)
            #expect(again.pending?.operationID == begun.pending?.operationID)
            // With B's recovery words it takes effect at once, and every copy moves.
            let outcome = try await KeystoreRotation.rotateIdentity(
                configuration: device.configuration, recoveryKey: try TestRecovery.key(for: b.keys.userID))
            #expect(outcome.generation == 2 && outcome.rewrapped == 1 && outcome.alreadyCurrent == 0 && outcome.pending == nil)
            #expect(outcome.backedUp)  // the words approved it: the new keys are escrowed to them
            let session = try await DeviceIdentity.session(configuration: device.configuration)
            #expect(session.keys.agreementKey.publicKey != b.keys.agreementKey.publicKey)
            #expect(session.keys.masterKey != b.keys.masterKey)
            #expect(try await session.readRecords(member.id).values.map { String(decoding: $0, as: UTF8.self) } == ["blood type O+"])
            #expect(!FileManager.default.fileExists(atPath: KeystoreRotation.pendingPath(device.configuration)))
            // The keys the device held before open nothing that is served now.
            let wrapped = try await session.client.wrappedKey(member.id)
            #expect(throws: (any Error).self) { try b.withKeys(b.keys).unwrap(wrapped) }
        }
    }

    /// A compromised grant service answers the recovery key's approval with "applied" but keeps the
    /// old keys registered. The device believes what it sees, not what it was told: it finishes
    /// nothing, wraps no FMK to the new keys, keeps its old keys in use and the new ones waiting.
    @Test("a service that claims the recovery key's approval took effect, but did not apply it: nothing is re-wrapped")
    func aForgedApprovalWrapsNothing() async throws {
        try await GrantServiceHarness.with { service in
            let (b, member, device) = try await Self.grantee(on: service)
            defer { device.directory.remove() }
            let begun = try #require(try await KeystoreRotation.rotateIdentity(configuration: device.configuration).pending)

            let requests = Mutex<[String]>([])
            let proxy = try await ForwardingProxy.start(forwardingTo: service.baseURL) { exchange in
                requests.withLock { $0.append("\(exchange.method) \(exchange.path)") }
                guard exchange.method == "POST", exchange.path == "/v1/recovery/actions" else { return try await exchange.forward() }
                var applied = begun
                (applied.state, applied.decidedBy, applied.decidedAt) = (.applied, .recoveryKey, Date())
                return TestHTTP.Answer(
                    status: 200, body: try CanonicalJSON.encode(RecoveryActionResult(kind: .approve, operation: applied)),
                    headers: [("Content-Type", "application/json")])
            }
            defer { Task { await proxy.stop() } }
            var throughProxy = device.configuration
            throughProxy.grantServiceURL = proxy.baseURL
            throughProxy.tls = ClientTLS(plainHTTP: .loopback)

            do {
                _ = try await KeystoreRotation.rotateIdentity(configuration: throughProxy, recoveryKey: try TestRecovery.key(for: b.keys.userID))
                Issue.record("the rotation finished on a forged approval")
            } catch let error as AgentError {
                #expect(error.code == .serviceRefused && "\(error)".contains("still holds this device's old identity keys"), "\(error)")
            }
            // Nothing was wrapped or re-wrapped, and the old keys are still the device's.
            let sent = requests.withLock { $0 }
            #expect(!sent.contains { $0.hasPrefix("PUT") || $0.contains("wrapped-key") || $0.contains("rewrap") }, "\(sent)")
            #expect(try await DeviceIdentity.session(configuration: device.configuration).keys.identityKey.publicKey == b.keys.identityKey.publicKey)
            #expect(FileManager.default.fileExists(atPath: KeystoreRotation.pendingPath(device.configuration)))
            #expect(try await b.readRecords(member.id).count == 1)  // B's copy still opens with the old keys: not moved
            #expect(try await service.withConnection { connection in
                try await connection.query("SELECT identity_generation FROM users WHERE user_id = \(b.keys.userID)").first!.decode(Int.self, column: 0)
            } == 1)
            await proxy.stop()
        }
    }

    /// A compromised (or failing) grant service refuses the key backup after a rotation the words
    /// approved. The rotation is finished all the same — new keys in use, every copy moved — and
    /// the outcome says the backup still holds the previous keys, which `storeKeyBackup` renews.
    @Test("a key backup the service refuses after a rotation leaves the rotation finished and says so")
    func aRefusedBackupDoesNotUndoTheRotation() async throws {
        try await GrantServiceHarness.with { service in
            let (b, member, device) = try await Self.grantee(on: service)
            defer { device.directory.remove() }
            let proxy = try await ForwardingProxy.start(forwardingTo: service.baseURL) { exchange in
                guard exchange.method == "PUT", exchange.path == "/v1/key-backup" else { return try await exchange.forward() }
                return TestHTTP.Answer(
                    status: 503, body: Data(#"{"error":{"code":"database_unavailable","message":"refused by the test"}}"#.utf8),
                    headers: [("Content-Type", "application/json")])
            }
            defer { Task { await proxy.stop() } }
            var throughProxy = device.configuration
            throughProxy.grantServiceURL = proxy.baseURL
            throughProxy.tls = ClientTLS(plainHTTP: .loopback)

            let recovery = try TestRecovery.key(for: b.keys.userID)
            let outcome = try await KeystoreRotation.rotateIdentity(configuration: throughProxy, recoveryKey: recovery)
            #expect(outcome.generation == 2 && outcome.rewrapped == 1 && outcome.pending == nil)
            #expect(!outcome.backedUp)
            #expect(!FileManager.default.fileExists(atPath: KeystoreRotation.pendingPath(device.configuration)))
            let rotated = try await DeviceIdentity.session(configuration: device.configuration)
            #expect(rotated.keys.identityKey.publicKey != b.keys.identityKey.publicKey)
            #expect(try await rotated.readRecords(member.id).count == 1)
            // The stored backup is still of the previous keys; with the words it is renewed.
            #expect(try await rotated.client.keyBackup().identityPublicKey == Data(b.keys.identityKey.publicKey.rawRepresentation))
            try await rotated.storeKeyBackup(with: recovery)
            #expect(try recovery.open(try await rotated.client.keyBackup(), userID: b.keys.userID).identityKey.publicKey
                == rotated.keys.identityKey.publicKey)
            await proxy.stop()
        }
    }

    @Test("killed after the new keys were written but before the service heard of them: the new keys are discarded")
    func crashBeforeRegistration() async throws {
        try await GrantServiceHarness.with { service in
            let b = try await service.user("Adult B")
            let device = try await AgentTestKit.enrol(b, on: service)
            defer { device.directory.remove() }
            let keystore = try await Keystore.open(path: device.configuration.keystorePath, unlock: device.configuration.unlock)
            try await keystore.replacingUserKeys(UserKeys.generate(userID: b.keys.userID))
                .write(to: KeystoreRotation.pendingPath(device.configuration), unlock: device.configuration.unlock, cost: device.configuration.keyDerivation)

            let session = try await DeviceIdentity.session(configuration: device.configuration)
            #expect(session.keys.identityKey.publicKey == b.keys.identityKey.publicKey)
            #expect(!FileManager.default.fileExists(atPath: KeystoreRotation.pendingPath(device.configuration)))
            #expect(try await session.client.me().user.identityGeneration == 1)
        }
    }

    @Test("killed after the service took the new keys but before the copies moved: the next use finishes it")
    func crashAfterRegistration() async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await service.user("Adult A")
            let b = try await service.user("Adult B")
            let member = try await AgentTestKit.familyMember(ownedBy: owner, records: ["allergy: penicillin"])
            try await owner.grant(member.id, to: b.keys.userID)
            let (ownMember, _) = try await b.createFamilyMember()
            let device = try await AgentTestKit.enrol(b, on: service)
            defer { device.directory.remove() }
            let keystore = try await Keystore.open(path: device.configuration.keystorePath, unlock: device.configuration.unlock)
            let next = keystore.replacingUserKeys(UserKeys.generate(userID: b.keys.userID))
            try await next.write(
                to: KeystoreRotation.pendingPath(device.configuration), unlock: device.configuration.unlock,
                cost: device.configuration.keyDerivation)
            let old = UserSession(keys: keystore.userKeys, deviceID: keystore.deviceID, deviceKey: keystore.deviceKey, baseURL: service.baseURL, tls: service.clientTLS)
            try await old.rotateIdentityAtOnce(to: next.userKeys, currentGeneration: 1)
            // …and one copy moved before the crash.
            _ = try await old.withKeys(next.userKeys).rewrapHeldKeysForTest(ownMember, from: old.keys)

            let session = try await DeviceIdentity.session(configuration: device.configuration)
            #expect(session.keys.identityKey.publicKey == next.userKeys.identityKey.publicKey)
            #expect(try await session.readRecords(member.id).count == 1)
            _ = try await session.currentFMK(ownMember)
            #expect(!FileManager.default.fileExists(atPath: KeystoreRotation.pendingPath(device.configuration)))
        }
    }

    @Test("the user's other device takes the rotated keys from an identity update; a stale, foreign or misopened one changes nothing")
    func otherDevicesTakeTheNewKeys() async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await service.user("Adult A")
            let b = try await service.user("Adult B")
            let c = try await service.user("Adult C")
            let member = try await AgentTestKit.familyMember(ownedBy: owner, records: ["growth chart"])
            try await owner.grant(member.id, to: b.keys.userID)
            let laptop = try await AgentTestKit.enrol(b, on: service, name: "laptop")
            let tablet = try await AgentTestKit.enrol(b, on: service, name: "tablet")
            let stranger = try await AgentTestKit.enrol(c, on: service, name: "c's phone")
            defer { for device in [laptop, tablet, stranger] { device.directory.remove() } }
            let passphrase = "one-time passphrase"
            let stale = laptop.directory.file("stale.update")
            try await KeystoreRotation.writeIdentityUpdate(to: stale, passphrase: passphrase, configuration: laptop.configuration)

            _ = try await KeystoreRotation.rotateIdentity(configuration: laptop.configuration, recoveryKey: try TestRecovery.key(for: b.keys.userID))
            let update = laptop.directory.file("keys.update")
            try await KeystoreRotation.writeIdentityUpdate(to: update, passphrase: passphrase, configuration: laptop.configuration)
            let mode = try FileManager.default.attributesOfItem(atPath: update)[.posixPermissions] as? Int
            #expect(mode == 0o600)
            let foreign = stranger.directory.file("foreign.update")
            try await KeystoreRotation.writeIdentityUpdate(to: foreign, passphrase: passphrase, configuration: stranger.configuration)

            for (file, pass) in [(stale, passphrase), (foreign, passphrase), (update, "wrong")] {
                await #expect(throws: AgentError.self) {
                    try await KeystoreRotation.importIdentityUpdate(at: file, passphrase: pass, configuration: tablet.configuration)
                }
            }
            #expect(try await DeviceIdentity.session(configuration: tablet.configuration).keys.identityKey.publicKey == b.keys.identityKey.publicKey)
            #expect(try await KeystoreRotation.importIdentityUpdate(at: update, passphrase: passphrase, configuration: tablet.configuration) == 2)
            let session = try await DeviceIdentity.session(configuration: tablet.configuration)
            #expect(session.deviceID == tablet.deviceID, "the tablet keeps its own device")
            #expect(try await session.readRecords(member.id).count == 1)
        }
    }

    @Test("a passphrase change re-protects the keys: the old passphrase no longer opens them, the keys are the same")
    func changePassphrase() async throws {
        try await GrantServiceHarness.with { service in
            let b = try await service.user("Adult B")
            let device = try await AgentTestKit.enrol(b, on: service)
            defer { device.directory.remove() }
            let before = try await Keystore.open(path: device.configuration.keystorePath, unlock: device.configuration.unlock)
            try await KeystoreRotation.changeUnlock(configuration: device.configuration, to: .passphrase("a new passphrase"))

            await #expect(throws: AgentError.self) {
                _ = try await Keystore.open(path: device.configuration.keystorePath, unlock: device.configuration.unlock)
            }
            let after = try await Keystore.open(path: device.configuration.keystorePath, unlock: .passphrase("a new passphrase"))
            #expect(after.userKeys.identityKey.publicKey == before.userKeys.identityKey.publicKey)
            #expect(after.storageKey == before.storageKey && after.deviceID == before.deviceID)
            await #expect(throws: AgentError.self) {
                try await KeystoreRotation.changeUnlock(configuration: device.configuration, to: .passphrase("x"))
            }
        }
    }
}

extension UserSession {
    /// Moves one family member's copy only, as a rotation interrupted half-way would have.
    fileprivate func rewrapHeldKeysForTest(_ familyMemberID: UUID, from previous: UserKeys) async throws {
        // With its signed `rekey` statement, as the service requires for an owner copy.
        _ = try await rewrapHeldKeys(from: previous, only: [familyMemberID])
    }
}
