import Foundation
import RescindClient
import RescindCrypto
import RescindProtocol
import Testing
import RescindTLS

@testable import DeviceAgent

/// The engine and its store with the grant service unreachable: what must work without
/// any network (erasure, refusing downgrades) does, and what needs it waits.
@Suite("Engine without a network")
struct OfflineEngineTests {
    struct Fixture {
        let directory: TemporaryDirectory
        let engine: AgentEngine

        init() throws {
            directory = try TemporaryDirectory()
            var configuration = AgentConfiguration(
                dataDirectory: directory.path, grantServiceURL: URL(string: "http://127.0.0.1:9")!,
                grantServiceKey: Ed25519.PrivateKey().publicKey, kafka: .init(bootstrapServers: "127.0.0.1:9"),
                unlock: .passphrase("unused"))
            configuration.tls = ClientTLS(plainHTTP: .loopback)
            let keystore = Keystore(userKeys: .generate(), deviceID: UUID(), deviceKey: Ed25519.PrivateKey(), storageKey: SecretKey())
            engine = AgentEngine(
                configuration: configuration, keystore: keystore, store: try AgentStore(path: configuration.databasePath),
                logger: AgentTestKit.logger, faults: AgentFaults())
        }

        /// Caches a family member at `version` with `count` records, as a rotation would.
        func cache(_ id: UUID, version: Int, count: Int) async throws -> SecretKey {
            let fmk = SecretKey()
            let records = try (0..<count).map { index in
                let recordID = UUID()
                let sealed = try RecordCipher.seal(Array("record \(index)".utf8), recordID: recordID, version: version, fmk: fmk)
                return RecordResponse(
                    recordID: recordID, familyMemberID: id, fmkVersion: version, nonce: sealed.nonce,
                    ciphertext: sealed.ciphertext, tag: sealed.tag, changeSeq: Int64(index + 1))
            }
            let wrapped = try FMKWrapping.wrapForOwner(
                fmk, familyMemberID: id, version: UInt32(version), masterKey: try engine.keystore.storageKey)
            _ = try await engine.store.apply(
                .rotate(RotationResult(familyMemberID: id, fmkVersion: version, wrappedFMK: Data(wrapped), records: .inMemory(records), cursor: Int64(count))))
            return fmk
        }

        func command(_ action: DeviceAction, _ member: UUID, version: Int) -> DeviceCommand {
            DeviceCommand(
                commandID: UUID(), eventID: UUID(), deviceID: engine.deviceID, action: action, familyMemberID: member,
                newFMKVersion: version, issuedAt: Date())
        }
    }

    @Test("an erasure does not wait behind a rotation that needs the unreachable grant service")
    func erasureNeedsNoNetwork() async throws {
        let fixture = try Fixture()
        defer { fixture.directory.remove() }
        let rotating = UUID()
        let erasing = UUID()
        _ = try await fixture.cache(rotating, version: 1, count: 2)
        _ = try await fixture.cache(erasing, version: 1, count: 3)
        let rotation = fixture.command(.fmkRotation, rotating, version: 2)
        #expect(try await fixture.engine.store.enqueue(rotation) == .new)
        #expect(try await fixture.engine.store.enqueue(fixture.command(.secureDeletion, erasing, version: 2)) == .new)

        let error = await #expect(throws: AgentError.self) { try await fixture.engine.processPendingCommands() }
        #expect(error?.code == .unavailable)
        let erased = try #require(try await fixture.engine.store.familyMember(erasing))
        #expect(erased.status == .revoked && erased.wrappedFMK == nil && erased.versionFloor == 2)
        #expect(try await fixture.engine.store.pendingCommands().map(\.commandID) == [rotation.commandID])
        let owed = try await fixture.engine.store.owedAcks()
        let ack = try SignedMessage<DeviceAck>.verified(
            from: try #require(owed.first?.message), schema: DeviceAck.schema, key: try fixture.engine.keystore.deviceKey.publicKey)
        #expect(owed.count == 1 && ack.payload.action == .secureDeletion && ack.payload.recordsProcessed == 3)
        #expect(try await fixture.engine.store.familyMember(rotating)?.fmkVersion == 1)
    }

    @Test("the store never installs an FMK below the floor, and re-applying a change is a no-op")
    func floorAndIdempotency() async throws {
        let fixture = try Fixture()
        defer { fixture.directory.remove() }
        let member = UUID()
        _ = try await fixture.cache(member, version: 3, count: 1)
        _ = try await fixture.engine.store.apply(.erase(member, floor: 4))
        let again = try await fixture.engine.store.apply(.erase(member, floor: 4))
        #expect(again == ChangeEffect(changed: false, recordsProcessed: 0, fmkVersion: 0))
        let downgrade = await #expect(throws: AgentError.self) { _ = try await fixture.cache(member, version: 3, count: 1) }
        #expect(downgrade?.code == .versionDowngrade)
        let state = try #require(try await fixture.engine.store.familyMember(member))
        #expect(state.status == .revoked && state.versionFloor == 4)
    }

    @Test("erased records are sealed under a key that is gone: the old FMK opens none of them")
    func erasedRecordsStayClosed() async throws {
        let fixture = try Fixture()
        defer { fixture.directory.remove() }
        let member = UUID()
        let fmk = try await fixture.cache(member, version: 1, count: 4)
        let before = try await fixture.engine.store.records(of: member)
        #expect(try await fixture.engine.plaintexts(of: member).count == 4)
        _ = try await fixture.engine.store.apply(.erase(member, floor: 2))
        let after = try await fixture.engine.store.records(of: member)
        #expect(after.count == 4 && after.allSatisfy { $0.fmkVersion == 0 })
        for (old, new) in zip(before, after) {
            #expect(old.ciphertext != new.ciphertext && old.nonce != new.nonce)
            let response = RecordResponse(
                recordID: new.recordID, familyMemberID: member, fmkVersion: 1, nonce: new.nonce, ciphertext: new.ciphertext,
                tag: new.tag, changeSeq: new.changeSeq)
            #expect(throws: CryptoError.self) { try RecordCipher.open(response, fmk: fmk) }
        }
    }
}
