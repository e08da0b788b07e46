import Testing

@testable import RescindCrypto

@Suite("Secret key memory")
struct SecretKeyTests {
    @Test func importCopiesThenZeroesTheSource() throws {
        var bytes = Array(UInt8(1)...UInt8(32))
        let key = try SecretKey(bytes: &bytes)
        #expect(bytes.isEmpty)
        #expect(key.testBytes == Array(UInt8(1)...UInt8(32)))
        var short = [UInt8](repeating: 1, count: 16)
        expectCryptoError(.invalidKeyLength) { try SecretKey(bytes: &short) }
        #expect(short.count == 16)
    }

    /// A secret read into an array (a seed, a token, a passphrase) is overwritten in place.
    @Test func wipeZeroesTheArraysOwnStorage() {
        var secret = Array(UInt8(1)...UInt8(32))
        secret.wipe()
        #expect(secret == [UInt8](repeating: 0, count: 32))
        var empty: [UInt8] = []
        empty.wipe()
        #expect(empty.isEmpty)
    }

    @Test func equalityComparesBytes() throws {
        let bytes = [UInt8](repeating: 0xab, count: 32)
        #expect(try secretKey(bytes) == secretKey(bytes))
        #expect(try secretKey(bytes) != secretKey(flippingBit(bytes, at: 31)))
        #expect(SecretKey() != SecretKey())
    }

    @Test func descriptionsAreRedacted() throws {
        let key = try secretKey([UInt8](repeating: 0xab, count: 32))
        var dumped = ""
        dump(key, to: &dumped)
        for text in [key.description, key.debugDescription, String(describing: key), "\(key)", dumped] {
            #expect(!text.lowercased().contains("abab"))
            #expect(!text.contains("171"))
        }
        #expect(key.description == "SecretKey(redacted)")
    }

    @Test func errorDescriptionsNameOnlyTheFailure() {
        #expect(CryptoError(.authenticationFailed).description == "CryptoError(authentication_failed)")
        #expect(
            CryptoError(.unwrapFailed, openSSLErrorCode: 0x1c80_0066, itemIndex: 4).description
                == "CryptoError(unwrap_failed, openssl=0x1c800066, item=4)"
        )
    }
}
