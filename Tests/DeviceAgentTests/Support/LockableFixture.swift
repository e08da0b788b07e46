import Foundation
import RescindClient
import RescindProtocol
import RescindTLS
import Testing

@testable import DeviceAgent
@testable import RescindCrypto

extension SecretKey {
    /// The key's bytes, for tests that scan files for them.
    var bytesForTest: [UInt8] { withUnsafeBytes { Array($0) } }
}

/// An engine over a keystore written to disk (passphrase file), with the grant service
/// unreachable: for locked/unlocked, at-rest and export tests that need no network.
struct LockableFixture {
    let directory: TemporaryDirectory
    let configuration: AgentConfiguration
    let keystore: Keystore
    let engine: AgentEngine

    /// - Parameter locked: start the engine without keys.
    init(locked: Bool = false) async throws {
        directory = try TemporaryDirectory()
        let passphraseFile = try directory.write("passphrase", Data("lockable fixture passphrase\n".utf8))
        var configuration = AgentConfiguration(
            dataDirectory: directory.file("data"), grantServiceURL: URL(string: "http://127.0.0.1:9")!,
            grantServiceKey: Ed25519.PrivateKey().publicKey, kafka: .init(bootstrapServers: "127.0.0.1:9"),
            unlock: .passphraseFile(passphraseFile))
        configuration.tls = ClientTLS(plainHTTP: .loopback)
        configuration.keyDerivation = .init(opsLimit: 1, memLimit: 8 << 20)
        configuration.startLocked = locked
        try SecureFiles.prepareDirectory(configuration.dataDirectory)
        keystore = Keystore(userKeys: .generate(), deviceID: UUID(), deviceKey: Ed25519.PrivateKey(), storageKey: SecretKey())
        try await keystore.write(to: configuration.keystorePath, unlock: configuration.unlock, cost: configuration.keyDerivation)
        self.configuration = configuration
        engine = AgentEngine(
            configuration: configuration, identity: try KeystoreIdentity.read(path: configuration.keystorePath),
            keystore: locked ? nil : keystore, store: try AgentStore(path: configuration.databasePath), logger: AgentTestKit.logger,
            faults: AgentFaults())
    }

    /// Caches a family member at `version` with `count` records (as a rotation would, with
    /// the at-rest layer when `layered`) and returns its FMK, the plaintexts and the records
    /// as the grant service stores them.
    @discardableResult
    func cache(
        _ id: UUID, version: Int, count: Int, layered: Bool = false
    ) async throws -> (fmk: SecretKey, plaintexts: [UUID: [UInt8]], records: [CachedRecord]) {
        let fmk = SecretKey()
        var plaintexts: [UUID: [UInt8]] = [:]
        let records = try (0..<count).map { index in
            let recordID = UUID()
            let plaintext = Array("fixture record \(index) of \(id.uuidString)".utf8)
            plaintexts[recordID] = plaintext
            let sealed = try RecordCipher.seal(plaintext, recordID: recordID, version: version, fmk: fmk)
            return RecordResponse(
                recordID: recordID, familyMemberID: id, fmkVersion: version, nonce: sealed.nonce,
                ciphertext: sealed.ciphertext, tag: sealed.tag, changeSeq: Int64(index + 1))
        }
        let wrapped = try FMKWrapping.wrapForOwner(fmk, familyMemberID: id, version: UInt32(version), masterKey: keystore.storageKey)
        _ = try await engine.store.apply(
            .rotate(
                RotationResult(
                    familyMemberID: id, fmkVersion: version, wrappedFMK: Data(wrapped), records: .inMemory(records), cursor: Int64(count),
                    atRest: layered ? AtRestLayer(key: keystore.atRestKey) : nil)))
        let cached = records.map {
            CachedRecord(
                recordID: $0.recordID, familyMemberID: id, fmkVersion: version, nonce: $0.nonce, ciphertext: $0.ciphertext, tag: $0.tag,
                changeSeq: $0.changeSeq)
        }
        return (fmk, plaintexts, cached)
    }

    func cacheLayered(_ id: UUID, version: Int, count: Int) async throws -> (fmk: SecretKey, plaintexts: [UUID: [UInt8]], records: [CachedRecord]) {
        try await cache(id, version: version, count: count, layered: true)
    }

    func command(_ action: DeviceAction, _ member: UUID, version: Int) -> DeviceCommand {
        DeviceCommand(
            commandID: UUID(), eventID: UUID(), deviceID: engine.deviceID, action: action, familyMemberID: member,
            newFMKVersion: version, issuedAt: Date())
    }

    /// The receipts in the outbox, each verified with the receipt key its certificate names,
    /// the certificate with the device key.
    func owedReceipts() async throws -> [DeviceAck] {
        try await engine.store.owedMessages().filter(\.isReceipt).map { owed in
            let message = try SignedMessage<DeviceAck>.decode(owed.message, schema: DeviceAck.schema)
            let certificate = try #require(message.payload.receiptCertificate)
            try message.verify(key: try certificate.receiptKey(of: engine.deviceID, deviceKey: keystore.deviceKey.publicKey))
            #expect(message.signer == ReceiptKeyCertificate.receiptSigner(engine.deviceID))
            return message.payload
        }
    }

    /// The acks in the outbox, verified against the device key.
    func owedAcks() async throws -> [DeviceAck] {
        try await engine.store.owedAcks().map {
            try SignedMessage<DeviceAck>.verified(from: $0.message, schema: DeviceAck.schema, key: keystore.deviceKey.publicKey).payload
        }
    }
}
