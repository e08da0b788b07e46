import Foundation
import RescindCrypto
import Testing

@testable import RescindClient

/// The recovery key's paper form: published Ed25519 vectors, a round trip, and every way a
/// person gets words wrong refused (it must fail closed, never name another key quietly).
@Suite struct RecoveryKeyTests {
    /// RFC 8032, section 7.1, TEST 1: the seed and the public key it gives.
    static let seed = bytes("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
    static let publicKey = bytes("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")

    static func bytes(_ hex: String) -> [UInt8] {
        stride(from: 0, to: hex.count, by: 2).map {
            UInt8(hex[hex.index(hex.startIndex, offsetBy: $0)..<hex.index(hex.startIndex, offsetBy: $0 + 2)], radix: 16)!
        }
    }

    @Test func theWordsOfAPublishedSeedGiveItsPublishedKey() throws {
        let key = try RecoveryKey(seed: Self.seed)
        #expect(key.words.count == 34)
        #expect([UInt8](key.publicKey) == Self.publicKey)
        #expect(key.words.first == RecoveryKey.wordList[0x9d] && key.words[31] == RecoveryKey.wordList[0x60])
        // Written down and typed back: the same key, in any case, with four letters per word.
        let typed = key.words.map { String($0.prefix(4)).uppercased() }.joined(separator: " ")
        #expect([UInt8](try RecoveryKey(words: typed).publicKey) == Self.publicKey)
        #expect([UInt8](try RecoveryKey(words: key.words.joined(separator: ",\n")).publicKey) == Self.publicKey)
    }

    @Test func aNewKeyRoundTripsAndSigns() throws {
        let key = try RecoveryKey.generate()
        let again = try RecoveryKey(words: key.words.joined(separator: " "))
        #expect(again.publicKey == key.publicKey)
        let message: [UInt8] = Array("rotate".utf8)
        #expect(key.signingKey.publicKey.isValidSignature(again.signingKey.signature(for: message), for: message))
    }

    @Test func everySingleWrongWordIsRefused() throws {
        let key = try RecoveryKey(seed: Self.seed)
        for position in key.words.indices {
            var words = key.words
            let index = RecoveryKey.wordList.firstIndex(of: words[position])!
            words[position] = RecoveryKey.wordList[(index + 1) % 256]
            #expect(throws: RecoveryKeyError.self, "word \(position) changed") { try RecoveryKey(words: words.joined(separator: " ")) }
        }
    }

    @Test func missingSwappedUnknownAndTooShortWordsAreRefusedByName() throws {
        let words = try RecoveryKey(seed: Self.seed).words
        let missing = #expect(throws: RecoveryKeyError.self) { try RecoveryKey(words: words.dropLast().joined(separator: " ")) }
        #expect(missing?.description.contains("34 words; 33") == true)
        var swapped = words
        swapped.swapAt(0, 1)
        #expect(throws: RecoveryKeyError.self) { try RecoveryKey(words: swapped.joined(separator: " ")) }
        var unknown = words
        unknown[5] = "zebra"
        let named = #expect(throws: RecoveryKeyError.self) { try RecoveryKey(words: unknown.joined(separator: " ")) }
        #expect(named?.description.contains("word 6 (zebra)") == true)
        var short = words
        short[2] = String(short[2].prefix(3))
        #expect(throws: RecoveryKeyError.self) { try RecoveryKey(words: short.joined(separator: " ")) }
        #expect(throws: RecoveryKeyError.self) { try RecoveryKey(seed: Array(Self.seed.prefix(31))) }
    }

    @Test func theWordListIsFixed() throws {
        #expect(RecoveryKey.wordList.count == 256)
        #expect(Set(RecoveryKey.wordList.map { $0.prefix(4) }).count == 256)
        #expect(RecoveryKey.wordList == RecoveryKey.wordList.sorted())
        for word in RecoveryKey.wordList {
            #expect(RecoveryKey.wordList.filter { $0.hasPrefix(word) } == [word], "\(word) starts another word")
        }
        // Every word reads back, the short ones whole: eight seeds hold all 256 bytes.
        for block in 0..<8 {
            let key = try RecoveryKey(seed: (0..<32).map { UInt8(block * 32 + $0) })
            #expect(try RecoveryKey(words: key.words.joined(separator: " ")).publicKey == key.publicKey)
        }
    }
}
