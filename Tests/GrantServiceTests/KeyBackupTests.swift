import Foundation
import RescindCrypto
import RescindProtocol
import RescindTestSupport
import Testing

@testable import RescindClient

/// The recovery words alone give back what a user owns, with no device of theirs left: their
/// keys are escrowed to the recovery key (`KeyBackup`), which only the words can make and open.
/// Adversaries: a thief holding the owner's unlocked phone who acts first (retires every other
/// device, then tries to plant or spoil the backup), and a compromised grant service that
/// rewrites the stored backup.
@Suite(.serialized) struct KeyBackupTests {
    @Test func theThiefRetiresEveryOtherDeviceAndTheWordsAloneKeepEverythingOnANewLaptop() async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await GovernedOperationTests.owner(on: service)
            let thief = owner.phone
            let stolenFMK = try await thief.currentFMK(owner.emma).fmk
            let recovery = try TestRecovery.key(for: owner.userID)

            // The thief moves first: the iPad is retired (and lost for good here: it is never
            // restored), and the thief tries to replace the backup with one it can open.
            try await thief.client.retireDevice(owner.iPad.deviceID)
            let thiefsWords = try RecoveryKey.generate()
            await expectFailure(409, "recovery_key_not_registered") {
                try await thief.client.storeKeyBackup(try thiefsWords.backup(of: thief.keys))
            }
            var claimed = try thiefsWords.backup(of: thief.keys)
            claimed.recoveryPublicKey = recovery.publicKey
            claimed.signature = Data(thiefsWords.signingKey.signature(for: try claimed.signingInput()))
            await expectFailure(422, "bad_signature") { try await thief.client.storeKeyBackup(claimed) }

            // The owner, on a new laptop with the paper words only: enrol it, retire the phone,
            // and take the keys back from the backup that registration stored.
            let anonymous = GrantServiceClient(baseURL: service.baseURL, tls: service.clientTLS)
            let (laptopID, laptopKey) = try await recovery.enrolNewDevice(
                of: owner.userID, name: "Adult A's new laptop", kind: .laptop, through: anonymous)
            try await recovery.order(.retire, for: owner.userID, deviceID: thief.deviceID, through: anonymous)
            let laptop = try await UserSession.recovering(
                userID: owner.userID, deviceID: laptopID, deviceKey: laptopKey, recoveryKey: recovery,
                baseURL: service.baseURL, tls: service.clientTLS)
            #expect(laptop.keys.identityKey.publicKey == thief.keys.identityKey.publicKey)
            #expect(try await laptop.readRecords(owner.emma) == owner.records)

            // Rotate away from every key the phone held, move Emma, renew the backup.
            let current = try await GovernedOperationTests.recover(owner, on: laptop, stolenFMK: stolenFMK, service: service)
            let rotatedKeys = try await UserSession.recoveringKeys(owner.userID, laptopID, laptopKey, recovery, service)
            #expect(rotatedKeys == nil, "the backup still holds the keys rotated away: it must be refused as stale")
            await expectFailure(409, "stale_key_backup") { try await laptop.storeKeyBackup(with: recovery) }
            try await current.storeKeyBackup(with: recovery)

            // A second new device gets the new keys from the words, and reads everything.
            let (tabletID, tabletKey) = try await recovery.enrolNewDevice(
                of: owner.userID, name: "Adult A's new tablet", kind: .tablet, through: anonymous)
            let tablet = try await UserSession.recovering(
                userID: owner.userID, deviceID: tabletID, deviceKey: tabletKey, recoveryKey: recovery,
                baseURL: service.baseURL, tls: service.clientTLS)
            #expect(tablet.keys.identityKey.publicKey == current.keys.identityKey.publicKey)
            #expect(tablet.keys.identityKey.publicKey != thief.keys.identityKey.publicKey)
            #expect(try await tablet.readRecords(owner.emma) == owner.records)
            // The phone's token and signatures are refused.
            await expectFailure(401, "device_retired") { try await thief.client.keyBackup() }
        }
    }

    @Test func aBackupTheServiceRewroteOrAnotherKeyMadeOpensNothing() async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await service.user("Adult A")
            let recovery = try TestRecovery.key(for: owner.keys.userID)
            let stored = try await owner.client.keyBackup()
            #expect(try recovery.open(stored, userID: owner.keys.userID).identityKey.publicKey == owner.keys.identityKey.publicKey)

            // A compromised service rewrites each field in turn: the words refuse every one.
            for column in ["identity_key", "agreement_key", "master_key", "ephemeral_public_key", "identity_public_key", "signature"] {
                try await service.withConnection {
                    try await $0.execute(
                        "UPDATE key_backups SET \(unescaped: column) = set_byte(\(unescaped: column), 3, get_byte(\(unescaped: column), 3) # 1)")
                }
                let tampered = try await owner.client.keyBackup()
                #expect(throws: RecoveryKeyError.self, "\(column)") { try recovery.open(tampered, userID: owner.keys.userID) }
                try await service.withConnection {
                    try await $0.execute(
                        "UPDATE key_backups SET \(unescaped: column) = set_byte(\(unescaped: column), 3, get_byte(\(unescaped: column), 3) # 1)")
                }
            }
            // Another user's words, another user id, and a backup the service made itself.
            let other = try await service.user("Adult B")
            #expect(throws: RecoveryKeyError.self) { try TestRecovery.key(for: other.keys.userID).open(stored, userID: owner.keys.userID) }
            #expect(throws: RecoveryKeyError.self) { try recovery.open(stored, userID: other.keys.userID) }
            let forged = try RecoveryKey.generate().backup(of: UserKeys.generate(userID: owner.keys.userID))
            var planted = forged
            planted.recoveryPublicKey = recovery.publicKey
            #expect(throws: RecoveryKeyError.self) { try recovery.open(planted, userID: owner.keys.userID) }

            // Bad input changes nothing stored.
            await expectFailure(403) { try await other.client.storeKeyBackup(try recovery.backup(of: owner.keys)) }
            var short = try recovery.backup(of: owner.keys)
            short.masterKey = short.masterKey.prefix(39)
            await expectFailure(422, "invalid_field") { try await owner.client.storeKeyBackup(short) }
            await expectFailure(409, "stale_key_backup") {
                try await owner.client.storeKeyBackup(try recovery.backup(of: UserKeys.generate(userID: owner.keys.userID)))
            }
            #expect(try await owner.client.keyBackup() == stored)
            let withoutWords = try await UserSession.register(
                keys: UserKeys.generate(), displayName: "Adult C", deviceName: "Adult C's phone", baseURL: service.baseURL,
                tls: service.clientTLS)
            await expectFailure(404) { try await withoutWords.client.keyBackup() }
        }
    }
}

extension UserSession {
    /// The keys `recovering` would give a device, or nil when it refuses the stored backup.
    static func recoveringKeys(
        _ userID: UUID, _ deviceID: UUID, _ deviceKey: Ed25519.PrivateKey, _ recovery: RecoveryKey, _ service: GrantServiceHarness
    ) async throws -> UserKeys? {
        do {
            return try await recovering(
                userID: userID, deviceID: deviceID, deviceKey: deviceKey, recoveryKey: recovery, baseURL: service.baseURL,
                tls: service.clientTLS
            ).keys
        } catch is RecoveryKeyError {
            return nil
        }
    }
}
