import Foundation
import RescindClient
import RescindCrypto
import RescindProtocol
import Synchronization
import RescindTestSupport
import Testing

/// The guide's story for Emma, end to end through HTTP, PostgreSQL and Kafka.
@Suite(.serialized) struct RevocationScenarioTests {
    static func plaintexts(_ count: Int) -> [[UInt8]] {
        (0..<count).map { Array("record \($0): vaccination, allergy, medication".utf8) + [UInt8](repeating: UInt8($0 % 251), count: 2000) }
    }

    @Test func revokingAdultCRotatesForTheOthersAndLocksCOut() async throws {
        try await GrantServiceHarness.with { service in
            let adultA = try await service.user("Adult A")
            let adultB = try await service.user("Adult B")
            let adultC = try await service.user("Adult C")
            let (emma, fmkV1) = try await adultA.createFamilyMember()
            var recordIDs: [UUID] = []
            for plaintext in Self.plaintexts(20) {
                recordIDs.append(try await adultA.putRecord(emma, plaintext: plaintext, fmk: fmkV1, version: 1))
            }
            let codeForB = try await adultA.grant(emma, to: adultB.keys.userID)
            try await adultA.grant(emma, to: adultC.keys.userID)
            // TOFU: both sides compute the same verification code.
            #expect(codeForB == (try adultB.keys.agreementKey.verificationCode(with: adultA.keys.agreementKey.publicKey)))
            #expect(try await adultC.readRecords(emma).count == 20)

            var phases: [RevocationProgress.Phase] = []
            let progress = ProgressLog()
            let committed = try await adultA.revoke(
                emma, user: adultC.keys.userID, reason: "custody change", uploadBatchSize: 7,
                progress: { progress.append($0) })
            phases = progress.phases
            #expect(committed.newFMKVersion == 2)
            #expect(committed.recordsReencrypted == 20)
            #expect(committed.devicesNotified == 3)
            #expect(phases.first == .downloading && phases.last == .committed)
            // Batches of 7, 7 and 6, two in flight: the running total grows by one whole batch at a time.
            #expect(progress.uploadCounts == [7, 14, 20] || progress.uploadCounts == [7, 13, 20])

            // C is out: 403 on the key, the records, the version.
            for call in [
                { _ = try await adultC.client.wrappedKey(emma) },
                { _ = try await adultC.client.changes(emma, since: 0) },
                { _ = try await adultC.client.fmkVersion(emma) },
            ] as [@Sendable () async throws -> Void] {
                let error = await #expect(throws: GrantServiceError.self) { try await call() }
                #expect(error?.status == 403)
                #expect(error?.code == "access_revoked")
            }
            // A and B read the same plaintexts under FMK v2; the v1 key no longer opens anything.
            let expected = Dictionary(uniqueKeysWithValues: zip(recordIDs, Self.plaintexts(20)))
            #expect(try await adultA.readRecords(emma) == expected)
            #expect(try await adultB.readRecords(emma) == expected)
            for record in try await adultB.allRecords(emma) {
                #expect(record.fmkVersion == 2)
                #expect(throws: CryptoError.self) { try RecordCipher.open(record, fmk: fmkV1) }
            }
            // The server kept no wrapped key for C.
            let wiped = try await service.withConnection { connection in
                try await connection.query(
                    "SELECT wrapped_fmk IS NULL FROM access_grants WHERE grantee_user_id = \(adultC.keys.userID)"
                ).first!.decode(Bool.self, column: 0)
            }
            #expect(wiped)
        }
    }

    @Test func committedRevocationIsPublishedSignedWithOneCommandPerDevice() async throws {
        try await GrantServiceHarness.with { service in
            let adultA = try await service.user("Adult A")
            let adultAiPad = try await adultA.addDevice(name: "Adult A's iPad")
            let adultB = try await service.user("Adult B")
            let adultC = try await service.user("Adult C")
            let adultCiPad = try await adultC.addDevice(name: "Adult C's iPad")
            // Interactive devices (the CLI) keep nothing to rotate or erase: never expected.
            let adultACLI = try await adultA.addDevice(name: "Adult A's rescind CLI", role: .interactive)
            let adultCCLI = try await adultC.addDevice(name: "Adult C's rescind CLI", role: .interactive)
            let roles = Dictionary(uniqueKeysWithValues: try await adultC.client.devices().map { ($0.deviceID, $0.role) })
            #expect(roles == [adultC.deviceID: .agent, adultCiPad.deviceID: .agent, adultCCLI.deviceID: .interactive])
            let (emma, fmk) = try await adultA.createFamilyMember()
            _ = try await adultA.putRecord(emma, plaintext: Array("x".utf8), fmk: fmk, version: 1)
            try await adultA.grant(emma, to: adultB.keys.userID)
            try await adultA.grant(emma, to: adultC.keys.userID)
            let committed = try await adultA.revoke(emma, user: adultC.keys.userID, reason: "custody change")
            // The revoked user's interactive device is refused at once, like every other device of theirs.
            await #expect(throws: GrantServiceError.self) { _ = try await adultCCLI.currentFMK(emma) }
            _ = try await adultACLI.currentFMK(emma)

            let events = try await service.messages(.revocationEvents, count: 1)
            let event = try SignedMessage<RevocationEvent>.verified(
                from: try #require(events.first?.value), schema: RevocationEvent.schema, key: service.serviceKey
            ).payload
            #expect(events.first?.key == Data(emma.uuidString.lowercased().utf8))
            #expect(event.eventID == committed.eventID)
            #expect(event.newFMKVersion == 2)
            #expect(event.reason == "custody change")
            #expect(event.clientDurationMs != nil)
            let actions = Dictionary(uniqueKeysWithValues: event.expectedDevices.map { ($0.deviceID, $0.action) })
            #expect(actions == [
                adultA.deviceID: .fmkRotation, adultAiPad.deviceID: .fmkRotation, adultB.deviceID: .fmkRotation,
                adultC.deviceID: .secureDeletion, adultCiPad.deviceID: .secureDeletion,
            ])

            let commands = try await service.messages(.deviceCommands, count: 5).map { message in
                let command = try SignedMessage<DeviceCommand>.verified(
                    from: try #require(message.value), schema: DeviceCommand.schema, key: service.serviceKey
                ).payload
                #expect(message.key == Data(command.deviceID.uuidString.lowercased().utf8))
                return command
            }
            #expect(Dictionary(uniqueKeysWithValues: commands.map { ($0.deviceID, $0.action) }) == actions)
            #expect(commands.allSatisfy { $0.eventID == committed.eventID && $0.newFMKVersion == 2 })

            // Every other access change is on access_events: created + 2 grants.
            let accessEvents = try await service.messages(.accessEvents, count: 3).map {
                try SignedMessage<AccessEvent>.verified(from: $0.value!, schema: AccessEvent.schema, key: service.serviceKey).payload.kind
            }
            #expect(accessEvents == [.familyMemberCreated, .accessGranted, .accessGranted])
        }
    }

    @Test func regrantAfterSuspensionSeesOnlyTheCurrentVersion() async throws {
        try await GrantServiceHarness.with { service in
            let adultA = try await service.user("Adult A")
            let adultC = try await service.user("Adult C")
            let (emma, fmkV1) = try await adultA.createFamilyMember()
            let first = try await adultA.putRecord(emma, plaintext: Array("before".utf8), fmk: fmkV1, version: 1)
            try await adultA.grant(emma, to: adultC.keys.userID)
            let (cOldFMK, _) = try await adultC.currentFMK(emma)
            _ = try await adultA.revoke(emma, user: adultC.keys.userID, reason: "temporary suspension")

            // Re-grant wraps the *current* FMK (v2) for C.
            try await adultA.grant(emma, to: adultC.keys.userID)
            let (cFMK, version) = try await adultC.currentFMK(emma)
            #expect(version == 2)
            #expect(try await adultC.readRecords(emma)[first] == Array("before".utf8))
            // The key C kept from before opens nothing that is stored now.
            for record in try await adultC.allRecords(emma) {
                #expect(throws: CryptoError.self) { try RecordCipher.open(record, fmk: cOldFMK) }
            }
            #expect(cFMK != cOldFMK)
            let kinds = try await service.messages(.accessEvents, count: 3).map {
                try SignedMessage<AccessEvent>.verified(from: $0.value!, schema: AccessEvent.schema, key: service.serviceKey).payload.kind
            }
            #expect(kinds == [.familyMemberCreated, .accessGranted, .accessRegranted])
        }
    }

    @Test func stolenDeviceRevokesTheUserFromEveryFamilyMember() async throws {
        try await GrantServiceHarness.with { service in
            let adultA = try await service.user("Adult A")
            let adultB = try await service.user("Adult B")
            let (emma, emmaFMK) = try await adultA.createFamilyMember()
            let (liam, liamFMK) = try await adultA.createFamilyMember()
            let (noah, _) = try await adultA.createFamilyMember()
            _ = try await adultA.putRecord(emma, plaintext: Array("emma".utf8), fmk: emmaFMK, version: 1)
            _ = try await adultA.putRecord(liam, plaintext: Array("liam".utf8), fmk: liamFMK, version: 1)
            try await adultA.grant(emma, to: adultB.keys.userID)
            try await adultA.grant(liam, to: adultB.keys.userID)

            let committed = try await adultA.revokeEverywhere(user: adultB.keys.userID, reason: "device stolen")
            #expect(Set(committed.map(\.familyMemberID)) == [emma, liam])
            for familyMember in [emma, liam] {
                let error = await #expect(throws: GrantServiceError.self) { try await adultB.client.wrappedKey(familyMember) }
                #expect(error?.status == 403)
                #expect(try await adultA.client.fmkVersion(familyMember).currentFMKVersion == 2)
            }
            #expect(try await adultA.client.fmkVersion(noah).currentFMKVersion == 1)
            // B's new device gets access back through a re-grant.
            let newPhone = try await adultB.addDevice(name: "Adult B's new phone")
            try await adultA.grant(emma, to: adultB.keys.userID)
            #expect(try await newPhone.readRecords(emma).values.first == Array("emma".utf8))
        }
    }

    @Test func ownershipTransferThenTheNewOwnerRevokesThePreviousOne() async throws {
        try await GrantServiceHarness.with { service in
            let adultA = try await service.user("Adult A")
            let emmaUser = try await service.user("Emma", device: "first phone")
            let (emma, fmk) = try await adultA.createFamilyMember()
            let record = try await adultA.putRecord(emma, plaintext: Array("history".utf8), fmk: fmk, version: 1)
            try await adultA.grant(emma, to: emmaUser.keys.userID)

            let transferred = try await adultA.transferOwnershipAtOnce(emma, to: emmaUser.keys.userID)
            #expect(transferred.state == .applied)
            #expect(try await adultA.client.familyMember(emma).ownerUserID == emmaUser.keys.userID)
            try await emmaUser.adoptOwnership(emma)
            #expect(try await emmaUser.client.wrappedKey(emma).wrapping == .self)
            // The previous owner can no longer grant…
            let error = await #expect(throws: GrantServiceError.self) {
                try await adultA.client.grants(emma)
            }
            #expect(error?.status == 403)
            // …and the new owner can revoke them.
            _ = try await emmaUser.revoke(emma, user: adultA.keys.userID, reason: "turned 16")
            #expect(try await emmaUser.readRecords(emma)[record] == Array("history".utf8))
            let denied = await #expect(throws: GrantServiceError.self) { try await adultA.client.wrappedKey(emma) }
            #expect(denied?.code == "access_revoked")
            let kinds = try await service.messages(.accessEvents, count: 3).map {
                try SignedMessage<AccessEvent>.verified(from: $0.value!, schema: AccessEvent.schema, key: service.serviceKey).payload.kind
            }
            #expect(kinds == [.familyMemberCreated, .accessGranted, .ownershipTransferred])
        }
    }
}

/// Collects progress reports from the revocation's callback.
final class ProgressLog: Sendable {
    private let reports = Mutex<[RevocationProgress]>([])

    func append(_ report: RevocationProgress) { reports.withLock { $0.append(report) } }

    var phases: [RevocationProgress.Phase] { reports.withLock { $0.map(\.phase) } }

    var uploadCounts: [Int] {
        reports.withLock { $0.filter { $0.phase == .uploading && $0.recordsDone > 0 }.map(\.recordsDone) }
    }
}
