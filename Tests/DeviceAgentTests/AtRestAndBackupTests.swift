import Foundation
import RescindClient
import RescindCrypto
import RescindProtocol
import Testing

@testable import DeviceAgent

/// At-rest encryption switched on and off in place, and the key-free backup export.
@Suite("At-rest encryption and backups")
struct AtRestAndBackupTests {
    /// Every stored ciphertext of `records` (as the grant service has them) found in the data directory.
    static func ciphertextsOnDisk(_ fixture: LockableFixture, _ records: [CachedRecord]) throws -> Int {
        let files = try fixture.directory.allFileBytes()
        return records.filter { record in files.contains { $0.bytes.contains(bytes: [UInt8](record.ciphertext)) } }.count
    }

    @Test("turning at-rest encryption on seals every cached record in place; off restores them; records stay readable")
    func onAndOff() async throws {
        let fixture = try await LockableFixture()
        defer { fixture.directory.remove() }
        let agentKeys = try fixture.engine.keyRing.unlocked()
        let first = UUID()
        let cached = try await fixture.cache(first, version: 1, count: 5)
        let original = try await fixture.engine.store.records(of: first)
        #expect(try Self.ciphertextsOnDisk(fixture, original) == 5)

        #expect(try await fixture.engine.store.setAtRest(true, layer: agentKeys.atRest) == 5)
        #expect(try await fixture.engine.store.atRestEnabled())
        #expect(try Self.ciphertextsOnDisk(fixture, original) == 0, "the service's ciphertext is gone from every file")
        #expect(try await fixture.engine.store.records(of: first, atRest: agentKeys.atRest) == original)
        #expect(try await fixture.engine.plaintexts(of: first) == cached.plaintexts)
        let withoutKey = await #expect(throws: AgentError.self) { _ = try await fixture.engine.store.records(of: first) }
        #expect(withoutKey?.code == .locked)
        #expect(try await fixture.engine.store.setAtRest(true, layer: agentKeys.atRest) == 0, "already on: nothing to do")

        // A rotation while on writes sealed rows; the store refuses to write them without the layer.
        let second = UUID()
        let secondCached = try await fixture.cacheLayered(second, version: 1, count: 3)
        #expect(try Self.ciphertextsOnDisk(fixture, secondCached.records) == 0)
        #expect(try await fixture.engine.plaintexts(of: second) == secondCached.plaintexts)
        let unlayered = await #expect(throws: AgentError.self) { try await fixture.cache(UUID(), version: 1, count: 1) }
        #expect(unlayered?.code == .locked)

        // Erasure needs no key, on or off, and leaves nothing either key opens.
        try await fixture.engine.lock()
        _ = try await fixture.engine.receiveLocked(fixture.command(.secureDeletion, second, version: 2))
        try await fixture.engine.unlock()
        let erased = try await fixture.engine.store.records(of: second)
        #expect(erased.count == 3 && erased.allSatisfy { $0.fmkVersion == 0 })

        #expect(try await fixture.engine.store.setAtRest(false, layer: agentKeys.atRest) == 5)
        #expect(try await fixture.engine.store.records(of: first) == original)
        #expect(try Self.ciphertextsOnDisk(fixture, original) == 5)
        #expect(try await fixture.engine.plaintexts(of: first) == cached.plaintexts)
    }

    @Test("a backup export holds every live record as the service stores it and no key in any form")
    func backupHasNoKey() async throws {
        let fixture = try await LockableFixture()
        defer { fixture.directory.remove() }
        let kept = UUID()
        let erased = UUID()
        let cached = try await fixture.cache(kept, version: 3, count: 4)
        try await fixture.cache(erased, version: 1, count: 2)
        _ = try await fixture.engine.store.apply(.erase(erased, floor: 2))
        let wrappedFMK = try #require(try await fixture.engine.store.familyMember(kept)?.wrappedFMK)
        _ = try await fixture.engine.store.setAtRest(true, layer: try fixture.engine.keyRing.unlocked().atRest)

        let agent = try await DeviceAgent(configuration: fixture.configuration, logger: AgentTestKit.logger, faults: AgentFaults())
        let path = fixture.directory.file("backup.json")
        try await agent.exportBackup(to: path)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)

        // Every secret this device holds, raw and as base64 (the archive is JSON).
        let keystoreFile = try KeystoreFile.decode(
            try Data(contentsOf: URL(fileURLWithPath: fixture.configuration.keystorePath)), expecting: KeystoreFile.keystoreFormat,
            path: "keystore")
        var secrets: [(String, [UInt8])] = [
            ("raw FMK", cached.fmk.bytesForTest), ("wrapped FMK", [UInt8](wrappedFMK)),
            ("storage key", fixture.keystore.storageKey.bytesForTest), ("at-rest key", fixture.keystore.atRestKey.bytesForTest),
            ("master key", fixture.keystore.userKeys.masterKey.bytesForTest),
        ]
        for (name, field) in [
            ("wrapped agreement key", keystoreFile.agreementKey), ("wrapped identity key", keystoreFile.identityKey),
            ("wrapped master key", keystoreFile.masterKey), ("wrapped device key", keystoreFile.deviceKey),
            ("wrapped storage key", keystoreFile.storageKey), ("wrapped inbox key", keystoreFile.inboxKey),
            ("wrapped at-rest key", keystoreFile.atRestKey),
        ] {
            secrets.append((name, [UInt8](try #require(field))))
        }
        for (name, secret) in secrets {
            #expect(!bytes.contains(bytes: secret), "\(name) in the backup")
            #expect(!bytes.contains(bytes: Array(Data(secret).base64EncodedString().utf8)), "\(name) (base64) in the backup")
        }

        // What it does hold: the live records in the service's form, which open only with the FMK.
        let archive = try BackupArchive.decode(Data(bytes))
        #expect(archive.deviceID == fixture.keystore.deviceID)
        #expect(Set(archive.familyMembers.map(\.familyMemberID)) == [kept, erased])
        #expect(archive.records.count == 4 && archive.records.allSatisfy { $0.familyMemberID == kept })
        var opened: [UUID: [UInt8]] = [:]
        for record in archive.records {
            let response = RecordResponse(
                recordID: record.recordID, familyMemberID: kept, fmkVersion: record.fmkVersion, nonce: record.nonce,
                ciphertext: record.ciphertext, tag: record.tag, changeSeq: record.changeSeq)
            opened[record.recordID] = try RecordCipher.open(response, fmk: cached.fmk)
            #expect(throws: CryptoError.self) { try RecordCipher.open(response, fmk: SecretKey()) }
        }
        #expect(opened == cached.plaintexts)
    }
}
