import Foundation
import RescindClient
import RescindCrypto
import RescindProtocol
import RescindTestSupport
import Testing

@testable import DeviceAgent

@Suite("Rotation and cryptographic erasure after a real revocation", .serialized)
struct RevocationTests {
    @Test("the kept user's device rotates and reads; the revoked user's device erases, keeps nothing usable, and gets 403")
    func rotateAndErase() async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await service.user("Adult A")
            let kept = try await service.user("Adult B")
            let revoked = try await service.user("Adult C")
            let plaintexts = (1...12).map { "visit note \($0): unmistakable-plaintext-\($0)" }
            let member = try await AgentTestKit.familyMember(ownedBy: owner, records: plaintexts)
            try await owner.grant(member.id, to: kept.keys.userID)
            try await owner.grant(member.id, to: revoked.keys.userID)
            let keptDevice = try await AgentTestKit.enrol(kept, on: service, name: "kept-agent")
            let revokedDevice = try await AgentTestKit.enrol(revoked, on: service, name: "revoked-agent")
            defer {
                keptDevice.directory.remove()
                revokedDevice.directory.remove()
            }

            let keptAgent = RunningAgent(try await keptDevice.open())
            let revokedAgent = RunningAgent(try await revokedDevice.open())
            for agent in [keptAgent, revokedAgent] {
                try await AgentTestKit.eventually("initial sync") {
                    try await agent.agent.status().familyMembers.first?.records == plaintexts.count
                }
            }
            // What erasure must leave nowhere on disk: the cached ciphertexts and the FMK as
            // this device wrapped it (read from its own database before the revocation).
            let before = try await revokedAgent.agent.engine.store.records(of: member.id)
            let wrappedBefore = try #require(try await revokedAgent.agent.engine.store.familyMember(member.id)?.wrappedFMK)
            let oldFMK = try revokedAgent.agent.engine.fmk(of: try #require(try await revokedAgent.agent.engine.store.familyMember(member.id)))

            let committed = try await owner.revoke(member.id, user: revoked.keys.userID, reason: "custody change")
            #expect(committed.newFMKVersion == 2)

            try await AgentTestKit.eventually("rotation on the kept device") {
                try await keptAgent.agent.status().familyMembers.first?.fmkVersion == 2
            }
            #expect(try await keptAgent.agent.plaintexts(of: member.id) == member.records)
            #expect(try await keptAgent.agent.engine.store.records(of: member.id).allSatisfy { $0.fmkVersion == 2 })

            try await AgentTestKit.eventually("erasure on the revoked device") {
                try await revokedAgent.agent.status().familyMembers.first?.status == "revoked"
            }
            try await AgentTestKit.eventually("acks published") {
                let keptOwed = try await keptAgent.agent.status().owedAcks
                let revokedOwed = try await revokedAgent.agent.status().owedAcks
                return keptOwed == 0 && revokedOwed == 0
            }
            await keptAgent.stop()
            await revokedAgent.stop()

            // Acks: one each, signed by the device key, with what was done.
            let keptAcks = try await AgentTestKit.acks(service, from: keptDevice)
            #expect(keptAcks.map(\.outcome) == [.applied])
            #expect(keptAcks.first?.action == .fmkRotation && keptAcks.first?.fmkVersion == 2)
            #expect(keptAcks.first?.recordsProcessed == plaintexts.count)
            let revokedAcks = try await AgentTestKit.acks(service, from: revokedDevice)
            #expect(revokedAcks.map(\.outcome) == [.applied])
            #expect(revokedAcks.first?.action == .secureDeletion && revokedAcks.first?.fmkVersion == 0)
            #expect(revokedAcks.first?.recordsProcessed == plaintexts.count)

            // The erased device: no FMK row content, records no longer open under the old FMK.
            let reopened = try await revokedDevice.open()
            let state = try #require(try await reopened.engine.store.familyMember(member.id))
            #expect(state.status == .revoked && state.wrappedFMK == nil && state.fmkVersion == 0 && state.versionFloor == 2)
            let after = try await reopened.engine.store.records(of: member.id)
            #expect(after.count == plaintexts.count)
            for record in after {
                let response = RecordResponse(
                    recordID: record.recordID, familyMemberID: member.id, fmkVersion: 1, nonce: record.nonce,
                    ciphertext: record.ciphertext, tag: record.tag, changeSeq: record.changeSeq)
                #expect(throws: CryptoError.self) { try RecordCipher.open(response, fmk: oldFMK) }
            }
            let readError = await #expect(throws: AgentError.self) { try await reopened.plaintexts(of: member.id) }
            #expect(readError?.code == .accessRevoked)

            // Scan every file of the data directory: no plaintext, no raw or wrapped FMK, no old ciphertext.
            let files = try revokedDevice.directory.allFileBytes()
            #expect(files.contains { $0.name.hasSuffix("cache.sqlite") })
            for (name, bytes) in files {
                #expect(!bytes.contains(bytes: member.rawFMK), "raw FMK in \(name)")
                #expect(!bytes.contains(bytes: [UInt8](wrappedBefore)), "wrapped FMK in \(name)")
                for text in plaintexts { #expect(!bytes.contains(bytes: Array(text.utf8)), "plaintext in \(name)") }
                for record in before { #expect(!bytes.contains(bytes: [UInt8](record.ciphertext)), "old ciphertext in \(name)") }
            }

            // And the grant service refuses this device the new key.
            let denied = await #expect(throws: GrantServiceError.self) { try await revokedDevice.session.client.wrappedKey(member.id) }
            #expect(denied?.status == 403)
        }
    }
}
