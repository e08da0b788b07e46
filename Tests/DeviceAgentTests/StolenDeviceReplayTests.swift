import Foundation
import RescindClient
import RescindCrypto
import RescindKafka
import RescindProtocol
import RescindTestSupport
import Testing

@testable import DeviceAgent

/// The thief after the stolen-device flow: Adult B's phone was retired, B was revoked
/// everywhere, rotated on the laptop and re-granted. The thief, who can write to the
/// commands topic, replays every command ever published there — the erasure B's laptop
/// once received among them. B's laptop agent answers each as already applied and keeps
/// the re-granted family member whole.
@Suite("A thief replaying old commands after the stolen-device flow", .serialized)
struct StolenDeviceReplayTests {
    @Test("replayed commands, the old erasure included, change nothing on the re-granted device")
    func replayedCommandsChangeNothing() async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await service.user("Adult A")
            let phone = try await service.user("Adult B")
            let member = try await AgentTestKit.familyMember(ownedBy: owner, records: ["blood type O+", "allergy: penicillin"])
            try await owner.grant(member.id, to: phone.keys.userID)
            let laptop = try await AgentTestKit.enrol(phone, on: service, name: "laptop")
            defer { laptop.directory.remove() }
            var running = RunningAgent(try await laptop.open())
            try await AgentTestKit.eventually("initial sync") {
                try await running.agent.status().familyMembers.first?.fmkVersion == 1
            }

            // The owner's flow: B is revoked everywhere (the laptop erases), B retires the phone…
            var plan = try await owner.beginStolenDeviceRecovery(user: phone.keys.userID, reason: "phone stolen")
            _ = try await owner.advance(&plan) { _ in }
            try await AgentTestKit.eventually("the laptop erased") {
                try await running.agent.status().familyMembers.first?.status == "revoked"
            }
            try await laptop.session.client.retireDevice(phone.deviceID)
            // …rotates on the laptop (its agent restarts with the new keys)…
            await running.stop()
            _ = try await KeystoreRotation.rotateIdentity(
                configuration: laptop.configuration, recoveryKey: try TestRecovery.key(for: phone.keys.userID))
            running = RunningAgent(try await laptop.open())
            // …and is re-granted once the owner compared codes.
            let steps = try await owner.advance(&plan) { _ in }
            guard case .confirmNewKeys(_, let code)? = steps.last else { Issue.record("\(steps)"); return }
            _ = try await owner.advance(&plan, confirmedCode: code) { _ in }
            try await running.agent.selfHeal()
            try await AgentTestKit.eventually("the laptop holds v2") {
                let held = try await running.agent.status().familyMembers.first
                return held?.fmkVersion == 2 && held?.status == "active"
            }
            let acksBefore = try await running.agent.status().sentAcks

            // The thief replays everything the commands topic ever carried.
            let history = try await AgentTestKit.allMessages(service, .deviceCommands)
            #expect(history.count >= 2, "the revocation's commands are there to replay")
            for message in history {
                let key = try #require(message.key.flatMap { UUID(uuidString: String(decoding: $0, as: UTF8.self)) })
                try await AgentTestKit.publishCommand(service, key: key, value: try #require(message.value))
            }
            // Each replayed command is answered; a replayed governance notice is kept once, unanswered.
            let addressedToLaptop = history.filter {
                $0.key == Data(laptop.deviceID.uuidString.lowercased().utf8) && !GrantServiceHarness.isGovernanceNotice($0.value)
            }.count
            try await AgentTestKit.eventually("every replay answered") {
                try await running.agent.status().sentAcks >= acksBefore + addressedToLaptop
            }
            await running.stop()

            let status = try await running.agent.status()
            #expect(status.familyMembers.map(\.status) == ["active"])
            #expect(status.familyMembers.map(\.fmkVersion) == [2])
            let acks = try await AgentTestKit.acks(service, from: laptop)
            #expect(acks.suffix(addressedToLaptop).allSatisfy { $0.outcome == .alreadyApplied }, "\(acks.map(\.outcome))")
            // Whole, and under the new FMK: the records open, and none with the FMK the phone held.
            let reopened = try await DeviceIdentity.session(configuration: laptop.configuration)
            let (newFMK, _) = try await reopened.currentFMK(member.id)
            var rawOld = member.rawFMK
            let oldFMK = try SecretKey(bytes: &rawOld)
            for record in try await reopened.allRecords(member.id) {
                _ = try RecordCipher.open(record, fmk: newFMK)
                #expect(throws: (any Error).self) { try RecordCipher.open(record, fmk: oldFMK) }
            }
            #expect(try await running.agent.plaintexts(of: member.id) == member.records)
        }
    }
}
