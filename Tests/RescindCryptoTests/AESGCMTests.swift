import Foundation
import Testing

@testable import RescindCrypto

@Suite("AES-256-GCM")
struct AESGCMTests {
    /// McGrew & Viega, "The Galois/Counter Mode of Operation (GCM)", test cases 13-16
    /// (the AES-256 cases; also in NIST's gcmEncryptExtIV256 set).
    struct Vector: Sendable, CustomTestStringConvertible {
        let name: String
        let key: String
        let nonce: String
        let plaintext: String
        let associatedData: String
        let ciphertext: String
        let tag: String
        var testDescription: String { name }
    }

    static let vectors: [Vector] = {
        let key15 = "feffe9928665731c6d6a8f9467308308 feffe9928665731c6d6a8f9467308308"
        let plaintext15 = """
            d9313225f88406e5a55909c5aff5269a 86a7a9531534f7da2e4c303d8a318a72
            1c3c0c95956809532fcf0e2449a6b525 b16aedf5aa0de657ba637b391aafd255
            """
        let ciphertext15 = """
            522dc1f099567d07f47f37a32a84427d 643a8cdcbfe5c0c97598a2bd2555d1aa
            8cb08e48590dbb3da7b08b1056828838 c5f61e6393ba7a0abcc9f662898015ad
            """
        return [
            Vector(
                name: "TC13",
                key: String(repeating: "00", count: 32),
                nonce: String(repeating: "00", count: 12),
                plaintext: "",
                associatedData: "",
                ciphertext: "",
                tag: "530f8afbc74536b9a963b4f1c4cb738b"
            ),
            Vector(
                name: "TC14",
                key: String(repeating: "00", count: 32),
                nonce: String(repeating: "00", count: 12),
                plaintext: String(repeating: "00", count: 16),
                associatedData: "",
                ciphertext: "cea7403d4d606b6e074ec5d3baf39d18",
                tag: "d0d1c8a799996bf0265b98b5d48ab919"
            ),
            Vector(
                name: "TC15",
                key: key15,
                nonce: "cafebabefacedbaddecaf888",
                plaintext: plaintext15,
                associatedData: "",
                ciphertext: ciphertext15,
                tag: "b094dac5d93471bdec1a502270e3cc6c"
            ),
            Vector(
                name: "TC16",
                key: key15,
                nonce: "cafebabefacedbaddecaf888",
                plaintext: hexString(Array(hex(plaintext15).prefix(60))),
                associatedData: "feedfacedeadbeeffeedfacedeadbeefabaddad2",
                ciphertext: hexString(Array(hex(ciphertext15).prefix(60))),
                tag: "76fc6ece0f4e1768cddf8853bb2d551b"
            ),
        ]
    }()

    @Test("known-answer seal (fixed nonce, internal path)", arguments: vectors)
    func knownAnswerSeal(vector: Vector) throws {
        let cipher = AESGCMCipher(key: try secretKey(hex(vector.key)))
        let box = try hex(vector.plaintext).withUnsafeBytes { plaintext in
            try hex(vector.associatedData).withUnsafeBytes { associatedData in
                try hex(vector.nonce).withUnsafeBytes { nonce in
                    try cipher.seal(plaintext, authenticating: associatedData, fixedNonce: nonce)
                }
            }
        }
        #expect(box.nonce == hex(vector.nonce))
        #expect(box.ciphertext == hex(vector.ciphertext))
        #expect(box.tag == hex(vector.tag))
    }

    @Test("known-answer open", arguments: vectors)
    func knownAnswerOpen(vector: Vector) throws {
        let box = try AESGCM.SealedBox(
            nonce: hex(vector.nonce),
            ciphertext: hex(vector.ciphertext),
            tag: hex(vector.tag)
        )
        let plaintext = try AESGCM.open(
            box,
            using: secretKey(hex(vector.key)),
            authenticating: hex(vector.associatedData)
        )
        #expect(plaintext == hex(vector.plaintext))
    }

    @Test func roundTripThroughStaticAndCipherAPIs() throws {
        let key = SecretKey()
        let message = Array("blood type: O-negative".utf8)
        let associatedData = Array("record-1".utf8)
        let box = try AESGCM.seal(message, using: key, authenticating: associatedData)
        #expect(box.combined.count == message.count + AESGCM.overheadByteCount)
        #expect(box.ciphertext != message)
        let cipher = AESGCMCipher(key: key)
        #expect(try cipher.open(box, authenticating: associatedData) == message)
        #expect(
            try AESGCM.open(cipher.seal([], authenticating: associatedData), using: key, authenticating: associatedData)
                == []
        )
    }

    @Test func everySealDrawsAFreshNonce() throws {
        let cipher = AESGCMCipher(key: SecretKey())
        // 300 seals cross several refills of the 64-nonce buffer.
        let nonces = try (0..<300).map { _ in try cipher.seal([1, 2, 3]).nonce }
        #expect(Set(nonces).count == nonces.count)
    }

    @Test func wireFormRoundTrip() throws {
        let key = SecretKey()
        let box = try AESGCM.seal(Array(0..<100), using: key)
        #expect(box.combined == box.nonce + box.ciphertext + box.tag)
        #expect(try AESGCM.SealedBox(combined: box.combined) == box)
        #expect(try AESGCM.SealedBox(nonce: box.nonce, ciphertext: box.ciphertext, tag: box.tag) == box)
        expectCryptoError(.invalidInput) { try AESGCM.SealedBox(combined: Array(box.combined.prefix(27))) }
        expectCryptoError(.invalidInput) { try AESGCM.SealedBox(nonce: [0], ciphertext: [], tag: box.tag) }
        expectCryptoError(.invalidInput) { try AESGCM.SealedBox(nonce: box.nonce, ciphertext: [], tag: [0]) }
    }

    enum Tamper: String, CaseIterable, Sendable {
        case wrongKey, nonceBit, ciphertextBit, tagBit, associatedDataBit, missingAssociatedData, truncated
    }

    @Test("fails closed", arguments: Tamper.allCases)
    func failsClosed(tamper: Tamper) throws {
        let key = SecretKey()
        let associatedData = RecordAssociatedData.make(recordID: UUID(), fmkVersion: 3)
        let box = try AESGCM.seal(Array(repeating: 0x42, count: 64), using: key, authenticating: associatedData)
        var openKey = key
        var combined = box.combined
        var openAssociatedData = associatedData
        switch tamper {
        case .wrongKey: openKey = SecretKey()
        case .nonceBit: combined = flippingBit(combined, at: 5)
        case .ciphertextBit: combined = flippingBit(combined, at: AESGCM.nonceByteCount + 10, bit: 7)
        case .tagBit: combined = flippingBit(combined, at: combined.count - 1)
        case .associatedDataBit: openAssociatedData = flippingBit(associatedData, at: associatedData.count - 1)
        case .missingAssociatedData: openAssociatedData = []
        case .truncated: combined.removeLast()
        }
        let tampered = try AESGCM.SealedBox(combined: combined)
        expectCryptoError(.authenticationFailed) {
            try AESGCM.open(tampered, using: openKey, authenticating: openAssociatedData)
        }
    }

    @Test func recordAssociatedDataLayout() throws {
        let recordID = try #require(UUID(uuidString: "00112233-4455-6677-8899-AABBCCDDEEFF"))
        let associatedData = RecordAssociatedData.make(recordID: recordID, fmkVersion: 0x0102_0304)
        #expect(
            associatedData == Array("rescind/record/v1".utf8) + hex("00112233445566778899aabbccddeeff") + [1, 2, 3, 4]
        )
        #expect(associatedData.count == RecordAssociatedData.byteCount)
        #expect(
            RecordAssociatedData.make(recordID: recordID, fmkVersion: 2)
                != RecordAssociatedData.make(recordID: recordID, fmkVersion: 3)
        )
    }
}
