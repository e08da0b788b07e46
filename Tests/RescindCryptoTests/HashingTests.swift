import Testing

@testable import RescindCrypto

@Suite("SHA-256 and HKDF-SHA256")
struct HashingTests {
    /// FIPS 180-4 examples (NIST CSRC "SHA256.pdf") and the empty message.
    @Test(arguments: [
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        ),
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
    ])
    func sha256(message: String, digest: String) {
        #expect(SHA256.hash(Array(message.utf8)) == hex(digest))
    }

    /// RFC 5869 appendix A, test cases 1-3 (SHA-256).
    static let hkdfVectors: [(ikm: [UInt8], salt: [UInt8], info: [UInt8], okm: String)] = [
        (
            Array(repeating: 0x0b, count: 22), Array(0x00...0x0c), Array(0xf0...0xf9),
            "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"
        ),
        (
            Array(0x00...0x4f), Array(0x60...0xaf), Array(0xb0...0xff),
            """
            b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c
            59045a99cac7827271cb41c65e590e09da3275600c2f09b8367793a9aca3db71
            cc30c58179ec3e87c14c01d5c1f3434f1d87
            """
        ),
        (
            Array(repeating: 0x0b, count: 22), [], [],
            "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8"
        ),
    ]

    @Test("RFC 5869 test cases", arguments: 0..<3)
    func hkdf(testCase: Int) throws {
        let vector = Self.hkdfVectors[testCase]
        let expected = hex(vector.okm)
        let okm = try vector.ikm.withUnsafeBytes {
            try HKDF.sha256(inputKeyMaterial: $0, salt: vector.salt, info: vector.info, outputByteCount: expected.count)
        }
        #expect(okm.withUnsafeBytes { Array($0) } == expected, "test case \(testCase + 1)")
    }

    @Test func hkdfRejectsImpossibleLengths() {
        for length in [0, 255 * 32 + 1] {
            expectCryptoError(.invalidInput) {
                try [UInt8](repeating: 1, count: 32).withUnsafeBytes {
                    try HKDF.sha256(inputKeyMaterial: $0, info: [], outputByteCount: length)
                }
            }
        }
    }
}
