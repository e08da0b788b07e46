import Testing

@testable import RescindCrypto

@Suite("AES-256 key wrap (RFC 3394)")
struct AESKeyWrapTests {
    /// RFC 3394 section 4: the cases with a 256-bit KEK (4.3, 4.5, 4.6).
    static let vectors: [(section: String, keyData: String, wrapped: String)] = [
        ("4.3", "00112233445566778899AABBCCDDEEFF", "64E8C3F9CE0F5BA2 63E9777905818A2A 93C8191E7D6E8AE7"),
        (
            "4.5", "00112233445566778899AABBCCDDEEFF0001020304050607",
            "A8F9BC1612C68B3F F6E6F4FBE30E71E4 769C8B80A32CB895 8CD5D17D6B254DA1"
        ),
        (
            "4.6", "00112233445566778899AABBCCDDEEFF000102030405060708090A0B0C0D0E0F",
            "28C9F404C4B810F4 CBCCB35CFB87F826 3F5786E2D80ED326 CBC7F0E71A99F43B FB988B9B7A02DD21"
        ),
    ]
    static let kek = hex("000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F")

    @Test("RFC 3394 known answers", arguments: vectors.indices)
    func knownAnswer(index: Int) throws {
        let vector = Self.vectors[index]
        let wrapped = try hex(vector.keyData).withUnsafeBytes { keyData in
            try Self.kek.withUnsafeBytes { try AESKeyWrap.wrap(keyData: keyData, kek: $0) }
        }
        #expect(wrapped == hex(vector.wrapped), "section \(vector.section)")
        let unwrapped = try Self.kek.withUnsafeBytes { try AESKeyWrap.unwrap(hex(vector.wrapped), kek: $0) }
        #expect(unwrapped.withUnsafeBytes { Array($0) } == hex(vector.keyData), "section \(vector.section)")
    }

    @Test func publicAPIWrapsASecretKeyToTheRFCValue() throws {
        let kek = try secretKey(Self.kek)
        let key = try secretKey(hex(Self.vectors[2].keyData))
        let wrapped = try AESKeyWrap.wrap(key, using: kek)
        #expect(wrapped == hex(Self.vectors[2].wrapped))
        #expect(wrapped.count == AESKeyWrap.wrappedKeyByteCount)
        #expect(try AESKeyWrap.unwrap(wrapped, using: kek) == key)
    }

    @Test func unwrapFailsClosed() throws {
        let kek = SecretKey()
        let wrapped = try AESKeyWrap.wrap(SecretKey(), using: kek)
        expectCryptoError(.unwrapFailed) { try AESKeyWrap.unwrap(wrapped, using: SecretKey()) }
        for index in [0, 8, 39] {
            expectCryptoError(.unwrapFailed) { try AESKeyWrap.unwrap(flippingBit(wrapped, at: index), using: kek) }
        }
        expectCryptoError(.invalidInput) { try AESKeyWrap.unwrap(Array(wrapped.dropLast(8)), using: kek) }
        expectCryptoError(.invalidInput) { try AESKeyWrap.unwrap(Array(wrapped.dropLast()), using: kek) }
    }
}
