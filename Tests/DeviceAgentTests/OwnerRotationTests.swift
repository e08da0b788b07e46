import Foundation
import RescindClient
import RescindCrypto
import RescindProtocol
import RescindTestSupport
import Testing

@testable import DeviceAgent

/// The owner's stolen device, on the agents' side: a rotation that revokes nobody reaches every
/// holder's agent through the rotation's command path (verified `rotate` statement, new FMK,
/// records re-fetched, signed ack), and the stolen phone's data directory opens nothing new.
@Suite("The owner's stolen device: a rotation that revokes nobody", .serialized)
struct OwnerRotationTests {
    @Test("every holder's agent rotates and acks; the stolen phone's data directory opens nothing re-encrypted")
    func holdersRotateAndTheStolenPhoneGetsNothing() async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await service.user("Adult A")
            let kept = try await service.user("Adult B")
            let plaintexts = (1...8).map { "visit note \($0): owner-rotation-\($0)" }
            let member = try await AgentTestKit.familyMember(ownedBy: owner, records: plaintexts)
            try await owner.grant(member.id, to: kept.keys.userID)
            let phoneDevice = try await AgentTestKit.enrol(owner, on: service, name: "owner-phone-agent")
            let keptDevice = try await AgentTestKit.enrol(kept, on: service, name: "kept-agent")
            defer {
                phoneDevice.directory.remove()
                keptDevice.directory.remove()
            }
            let phoneAgent = RunningAgent(try await phoneDevice.open())
            let keptAgent = RunningAgent(try await keptDevice.open())
            for agent in [phoneAgent, keptAgent] {
                try await AgentTestKit.eventually("initial sync") {
                    try await agent.agent.status().familyMembers.first?.records == plaintexts.count
                }
            }
            // A's phone is stolen unlocked: the thief has its data directory, keystore and FMK.
            let phoneState = try #require(try await phoneAgent.agent.engine.store.familyMember(member.id))
            let stolenFMK = try phoneAgent.agent.engine.fmk(of: phoneState)
            await phoneAgent.stop()

            // A, on the laptop: retire the phone, rotate the identity keys, rotate the family member.
            let laptop = try await owner.addDevice(name: "Adult A's laptop", role: .interactive)
            try await laptop.client.retireDevice(phoneDevice.deviceID)
            let newKeys = UserKeys.generate(userID: owner.keys.userID)
            try await laptop.rotateIdentityAtOnce(to: newKeys, currentGeneration: 1)
            let rotated = laptop.withKeys(newKeys)
            try await rotated.rewrapHeldKeys(from: laptop.keys)
            let committed = try await rotated.rotate(member.id, reason: "owner's phone stolen")
            #expect(committed.newFMKVersion == 2 && committed.recordsReencrypted == plaintexts.count)

            try await AgentTestKit.eventually("rotation on the holder's device") {
                try await keptAgent.agent.status().familyMembers.first?.fmkVersion == 2
            }
            #expect(try await keptAgent.agent.plaintexts(of: member.id) == member.records)
            #expect(try await keptAgent.agent.engine.store.records(of: member.id).allSatisfy { $0.fmkVersion == 2 })
            try await AgentTestKit.eventually("ack published") { try await keptAgent.agent.status().owedAcks == 0 }
            await keptAgent.stop()
            let acks = try await AgentTestKit.acks(service, from: keptDevice, atLeast: 1)
            #expect(acks.map(\.outcome) == [.applied])
            #expect(acks.first?.action == .fmkRotation && acks.first?.fmkVersion == 2)
            #expect(acks.first?.eventID == committed.eventID && acks.first?.recordsProcessed == plaintexts.count)
            // The retired phone was commanded nothing and answered nothing.
            #expect(try await AgentTestKit.acks(service, from: phoneDevice, for: .milliseconds(500)).isEmpty)

            // The thief runs the phone's credentials: refused; and the FMK it held opens no rotated record.
            let denied = await #expect(throws: GrantServiceError.self) { try await phoneDevice.session.client.wrappedKey(member.id) }
            #expect(denied?.status == 401)
            let rotatedRecords = try await kept.allRecords(member.id)
            #expect(rotatedRecords.count == plaintexts.count)
            for record in rotatedRecords {
                #expect(record.fmkVersion == 2)
                #expect(throws: CryptoError.self) { try RecordCipher.open(record, fmk: stolenFMK) }
            }
        }
    }

    @Test("the owner's own other agent, given the new identity keys, rotates too and acks")
    func theOwnersOwnAgentRotatesOnceItHasTheNewKeys() async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await service.user("Adult A")
            let plaintexts = (1...5).map { "growth chart \($0)" }
            let member = try await AgentTestKit.familyMember(ownedBy: owner, records: plaintexts)
            let phone = try await AgentTestKit.enrol(owner, on: service, name: "owner-phone")
            let laptop = try await AgentTestKit.enrol(owner, on: service, name: "owner-laptop")
            let tablet = try await AgentTestKit.enrol(owner, on: service, name: "owner-tablet")
            defer { for device in [phone, laptop, tablet] { device.directory.remove() } }

            // The phone is stolen: retired from the laptop, whose agent rotates the identity keys and
            // hands them to the tablet (`rescind-agent rotate-identity`, `update-identity --bundle`).
            try await laptop.session.client.retireDevice(phone.deviceID)
            _ = try await KeystoreRotation.rotateIdentity(
                configuration: laptop.configuration, recoveryKey: try TestRecovery.key(for: owner.keys.userID))
            let update = laptop.directory.file("keys.update")
            try await KeystoreRotation.writeIdentityUpdate(to: update, passphrase: "one-time", configuration: laptop.configuration)
            #expect(try await KeystoreRotation.importIdentityUpdate(at: update, passphrase: "one-time", configuration: tablet.configuration) == 2)

            let tabletAgent = RunningAgent(try await tablet.open())
            try await AgentTestKit.eventually("initial sync") {
                try await tabletAgent.agent.status().familyMembers.first?.records == plaintexts.count
            }
            let rotated = try await DeviceIdentity.session(configuration: laptop.configuration)
            var plan = OwnerStolenDeviceRecovery(deviceID: phone.deviceID, reason: "phone stolen")
            let steps = try await rotated.advance(&plan) { _ in }
            guard case .rotated(member.id, 2, plaintexts.count, let eventID)? = steps.first, steps.count == 1 else {
                Issue.record("\(steps)")
                await tabletAgent.stop()
                return
            }
            try await AgentTestKit.eventually("rotation on the owner's tablet") {
                try await tabletAgent.agent.status().familyMembers.first?.fmkVersion == 2
            }
            #expect(try await tabletAgent.agent.plaintexts(of: member.id) == member.records)
            try await AgentTestKit.eventually("ack published") { try await tabletAgent.agent.status().owedAcks == 0 }
            await tabletAgent.stop()
            let acks = try await AgentTestKit.acks(service, from: tablet, atLeast: 1)
            #expect(acks.map(\.outcome) == [.applied] && acks.first?.eventID == eventID && acks.first?.fmkVersion == 2)
        }
    }
}
