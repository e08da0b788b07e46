import Foundation
import RescindClient
import RescindCrypto
import RescindProtocol
import RescindTestSupport
import Testing

@testable import DeviceAgent

@Suite("Enrolment and sync against a real grant service", .serialized)
struct EnrolmentSyncTests {
    @Test("an enrolled device downloads what its user may read, then syncs changes by cursor")
    func enrolAndSync() async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await service.user("Adult A")
            let grantee = try await service.user("Adult B")
            let member = try await AgentTestKit.familyMember(ownedBy: owner, records: ["blood type O+", "allergy: penicillin"])
            try await owner.grant(member.id, to: grantee.keys.userID)
            let device = try await AgentTestKit.enrol(grantee, on: service)
            defer { device.directory.remove() }

            let agent = try await device.open()
            try await agent.selfHeal()
            #expect(try await agent.plaintexts(of: member.id) == member.records)
            var status = try await agent.status()
            #expect(status.familyMembers.map(\.fmkVersion) == [1])

            // A new record and a deletion arrive by incremental sync.
            let (fmk, version) = try await owner.currentFMK(member.id)
            let added = try await owner.putRecord(member.id, plaintext: Array("vaccination 2026".utf8), fmk: fmk, version: version)
            let removed = try #require(member.records.keys.first)
            try await owner.client.deleteRecord(member.id, removed)
            try await agent.selfHeal()
            var expected = member.records
            expected[added] = Array("vaccination 2026".utf8)
            expected[removed] = nil
            #expect(try await agent.plaintexts(of: member.id) == expected)
            status = try await agent.status()
            #expect(status.familyMembers.first?.records == expected.count)

            // The data directory is 0700 and its files 0600.
            let directoryMode = try FileManager.default.attributesOfItem(atPath: device.dataDirectory)[.posixPermissions] as? Int
            #expect(directoryMode == 0o700)
            for name in ["keystore.json", "cache.sqlite"] {
                let mode = try FileManager.default.attributesOfItem(atPath: device.dataDirectory + "/" + name)[.posixPermissions] as? Int
                #expect(mode == 0o600, "\(name)")
            }
        }
    }

    @Test("a device provisioned by another device of the user imports its identity bundle")
    func provisionAndImport() async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await service.user("Adult A")
            let member = try await AgentTestKit.familyMember(ownedBy: owner, records: ["x-ray"])
            let first = try await AgentTestKit.enrol(owner, on: service, name: "laptop")
            defer { first.directory.remove() }
            let second = try TemporaryDirectory()
            defer { second.remove() }
            let bundle = second.file("identity.bundle")

            let deviceID = try await AgentEnrolment.provisionDevice(
                name: "tablet", bundlePath: bundle, passphrase: "pairing words", configuration: first.configuration)
            #expect(try FileManager.default.attributesOfItem(atPath: bundle)[.posixPermissions] as? Int == 0o600)
            let configuration = AgentTestKit.configuration(service, dataDirectory: second.file("data"))
            let wrong = await #expect(throws: AgentError.self) {
                try await AgentEnrolment.importBundle(at: bundle, passphrase: "guess", configuration: configuration)
            }
            #expect(wrong?.code == .wrongPassphrase)
            let enrolled = try await AgentEnrolment.importBundle(at: bundle, passphrase: "pairing words", configuration: configuration)
            #expect(enrolled.deviceID == deviceID && enrolled.userID == owner.keys.userID)

            let agent = try await DeviceAgent.open(configuration: configuration, logger: AgentTestKit.logger)
            try await agent.selfHeal()
            #expect(try await agent.plaintexts(of: member.id) == member.records)
            let again = await #expect(throws: AgentError.self) {
                try await AgentEnrolment.importBundle(at: bundle, passphrase: "pairing words", configuration: configuration)
            }
            #expect(again?.code == .alreadyEnrolled)
        }
    }
}
