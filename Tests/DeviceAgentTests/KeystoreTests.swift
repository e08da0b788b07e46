import Foundation
import RescindClient
import RescindCrypto
import Testing

@testable import DeviceAgent

@Suite("Keystore at rest")
struct KeystoreTests {
    /// Cheap Argon2id so tests stay fast; production defaults are 3 passes over 64 MiB.
    static let cost = AgentConfiguration.KeyDerivationCost(opsLimit: 1, memLimit: 8 << 20)

    func sampleKeystore() -> Keystore {
        Keystore(userKeys: .generate(), deviceID: UUID(), deviceKey: Ed25519.PrivateKey(), storageKey: SecretKey())
    }

    func roundTrips(_ original: Keystore, _ opened: Keystore) -> Bool {
        opened.userKeys.userID == original.userKeys.userID && opened.deviceID == original.deviceID
            && opened.userKeys.agreementKey.publicKey == original.userKeys.agreementKey.publicKey
            && opened.userKeys.identityKey.publicKey == original.userKeys.identityKey.publicKey
            && opened.userKeys.masterKey == original.userKeys.masterKey
            && opened.deviceKey.publicKey == original.deviceKey.publicKey && opened.storageKey == original.storageKey
    }

    @Test("a passphrase keystore opens with its passphrase, is 0600, and holds no raw key")
    func passphrase() async throws {
        try await TemporaryDirectory.with { directory in
            let keystore = sampleKeystore()
            let path = directory.file("keystore.json")
            try await keystore.write(to: path, unlock: .passphrase("correct horse"), cost: Self.cost)
            let opened = try await Keystore.open(path: path, unlock: .passphrase("correct horse"))
            #expect(roundTrips(keystore, opened))
            let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
            #expect(mode == 0o600)
            // Every secret is stored AES-key-wrapped (32 + 8 bytes), never raw.
            let file = try JSONDecoder().decode(KeystoreFile.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
            #expect(file.derivation.method == "argon2id")
            #expect([file.agreementKey, file.identityKey, file.masterKey, file.deviceKey, file.storageKey].allSatisfy { $0?.count == 40 })
        }
    }

    @Test("a wrong passphrase is refused with a clear message")
    func wrongPassphrase() async throws {
        try await TemporaryDirectory.with { directory in
            let path = directory.file("keystore.json")
            try await sampleKeystore().write(to: path, unlock: .passphrase("right"), cost: Self.cost)
            let error = await #expect(throws: AgentError.self) {
                try await Keystore.open(path: path, unlock: .passphrase("wrong"))
            }
            #expect(error?.code == .wrongPassphrase)
            #expect(error?.description == "wrong passphrase or key file for \(path)")
        }
    }

    @Test("a key-file keystore opens with its key file and refuses another")
    func keyFile() async throws {
        try await TemporaryDirectory.with { directory in
            let keyFile = try directory.write("master.key", Data(SecureRandom.bytes(count: 32)))
            let otherFile = try directory.write("other.key", Data(SecureRandom.bytes(count: 32)))
            let path = directory.file("keystore.json")
            let keystore = sampleKeystore()
            try await keystore.write(to: path, unlock: .keyFile(keyFile), cost: Self.cost)
            #expect(roundTrips(keystore, try await Keystore.open(path: path, unlock: .keyFile(keyFile))))
            let wrong = await #expect(throws: AgentError.self) { try await Keystore.open(path: path, unlock: .keyFile(otherFile)) }
            #expect(wrong?.code == .wrongPassphrase)
            let mismatch = await #expect(throws: AgentError.self) { try await Keystore.open(path: path, unlock: .passphrase("x")) }
            #expect(mismatch?.code == .configuration)
        }
    }

    @Test("a passphrase file (trailing newline ignored) opens the keystore; an open one is refused")
    func passphraseFile() async throws {
        try await TemporaryDirectory.with { directory in
            let file = try directory.write("passphrase", Data("correct horse\n".utf8))
            let path = directory.file("keystore.json")
            let keystore = sampleKeystore()
            try await keystore.write(to: path, unlock: .passphraseFile(file), cost: Self.cost)
            #expect(roundTrips(keystore, try await Keystore.open(path: path, unlock: .passphrase("correct horse"))))
            try FileManager.default.setAttributes([.posixPermissions: 0o604], ofItemAtPath: file)
            let error = await #expect(throws: AgentError.self) { try await Keystore.open(path: path, unlock: .passphraseFile(file)) }
            #expect(error?.code == .insecurePermissions)
        }
    }

    @Test("a key file or keystore readable by others refuses to open")
    func insecureFiles() async throws {
        try await TemporaryDirectory.with { directory in
            let keyFile = try directory.write("master.key", Data(SecureRandom.bytes(count: 32)))
            let path = directory.file("keystore.json")
            try await sampleKeystore().write(to: path, unlock: .keyFile(keyFile), cost: Self.cost)

            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: keyFile)
            let keyError = await #expect(throws: AgentError.self) { try await Keystore.open(path: path, unlock: .keyFile(keyFile)) }
            #expect(keyError?.code == .insecurePermissions)
            #expect(keyError?.description.contains("key file \(keyFile) is open to other users (mode 0644)") == true)

            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keyFile)
            try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: path)
            let storeError = await #expect(throws: AgentError.self) { try await Keystore.open(path: path, unlock: .keyFile(keyFile)) }
            #expect(storeError?.code == .insecurePermissions)
        }
    }

    @Test("a data directory others can enter is refused; a missing one is created 0700")
    func dataDirectory() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let fresh = directory.file("data")
        try SecureFiles.prepareDirectory(fresh)
        #expect(try FileManager.default.attributesOfItem(atPath: fresh)[.posixPermissions] as? Int == 0o700)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: fresh)
        #expect(throws: AgentError(.insecurePermissions, "data directory \(fresh) is accessible by other users (mode 755); run `chmod 700 \(fresh)`")) {
            try SecureFiles.prepareDirectory(fresh)
        }
    }

    @Test("an identity bundle moves the user's keys under its own passphrase, never the storage key")
    func bundle() async throws {
        let original = sampleKeystore()
        let data = try await Keystore.bundle(
            userKeys: original.userKeys, deviceID: original.deviceID, deviceKey: original.deviceKey, passphrase: "one-time",
            cost: Self.cost)
        #expect(!String(decoding: data, as: UTF8.self).contains("storage_key"))
        let imported = try await Keystore.importBundle(data, passphrase: "one-time", path: "bundle")
        #expect(imported.userKeys.masterKey == original.userKeys.masterKey)
        #expect(imported.deviceKey.publicKey == original.deviceKey.publicKey)
        #expect(imported.storageKey != original.storageKey)
        let error = await #expect(throws: AgentError.self) { try await Keystore.importBundle(data, passphrase: "guess", path: "bundle") }
        #expect(error?.code == .wrongPassphrase)
    }
}
