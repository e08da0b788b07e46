import Foundation
import RescindCrypto

/// A user's recovery key: an Ed25519 key whose 32-byte seed is kept on paper, never on a device
/// or the service (only its public key is registered). It stands for the user when every device
/// is lost or in a thief's hands (docs/decisions/stolen-unlocked-device.md).
///
/// On paper it is 34 words: one per seed byte from a fixed list of 256 words whose first four
/// letters differ and none of which starts another (so four letters are enough to type one), then two checksum words, the first
/// two bytes of SHA-256 over a domain label and the seed. A word typed wrong, left out or swapped
/// with another is refused (a 1 in 65,536 chance that a wrong phrase passes the checksum; it then
/// names another key, which signs nothing the user's verifiers accept).
public struct RecoveryKey: Sendable {
    public let signingKey: Ed25519.PrivateKey
    /// Opens the user's keys escrowed to this recovery key (`KeyBackup`); derived from the seed.
    let escrowKey: X25519.PrivateKey
    /// The words to write down, in order.
    public let words: [String]

    public var publicKey: Data { Data(signingKey.publicKey.rawRepresentation) }

    /// A new random recovery key.
    public static func generate() throws -> RecoveryKey { try RecoveryKey(seed: SecureRandom.bytes(count: Ed25519.seedByteCount)) }

    /// The recovery key of a 32-byte seed.
    public init(seed: [UInt8]) throws {
        guard seed.count == Ed25519.seedByteCount else { throw RecoveryKeyError("a recovery key seed is 32 bytes") }
        words = (seed + Self.checksum(seed)).map { Self.wordList[Int($0)] }
        escrowKey = try KeyEscrow.escrowKey(recoverySeed: seed)
        var copy = seed
        signingKey = try Ed25519.PrivateKey(seed: &copy)
    }

    /// The recovery key written as `words` (any case, separated by spaces, commas or line breaks;
    /// each word by its first four letters or more).
    /// - Throws: `RecoveryKeyError` naming the first unknown word, a wrong count or a bad checksum.
    /// The recovery key whose words a file holds (a USB stick, a mounted secret), read and
    /// forgotten.
    /// - Throws: `RecoveryKeyError` for a file that cannot be read or words that do not check out.
    public init(wordsFile path: String) throws {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw RecoveryKeyError("cannot read the recovery words from \(path)")
        }
        try self.init(words: text)
    }

    public init(words text: String) throws {
        let typed = text.lowercased().split(whereSeparator: { $0.isWhitespace || $0 == "," || $0 == "-" }).map(String.init)
        let count = Ed25519.seedByteCount + Self.checksumByteCount
        guard typed.count == count else {
            throw RecoveryKeyError("a recovery key is \(count) words; \(typed.count) were given")
        }
        var bytes: [UInt8] = []
        for (position, word) in typed.enumerated() {
            // A whole word, or its first four letters or more: no two words share their first four,
            // and none is the start of another, so the match is unique.
            guard let index = Self.wordList.firstIndex(where: { $0 == word || word.count >= 4 && $0.hasPrefix(word) }) else { throw RecoveryKeyError("word \(position + 1) (\(word)) is not one of the recovery words") }
            bytes.append(UInt8(index))
        }
        let seed = Array(bytes.prefix(Ed25519.seedByteCount))
        guard Array(bytes.suffix(Self.checksumByteCount)) == Self.checksum(seed) else {
            throw RecoveryKeyError("the recovery words do not check out: a word is wrong, missing or out of order")
        }
        try self.init(seed: seed)
    }

    static let checksumByteCount = 2

    static func checksum(_ seed: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(Array("rescind-recovery-key-v1\n".utf8) + seed).prefix(checksumByteCount))
    }

    /// 256 words, sorted, no two sharing their first four letters, none the start of another.
    static let wordList: [String] = [
        "able", "acid", "acre", "actor", "adapt", "adult", "agent", "album", "alert", "alley", "alpha", "amber", "ample", "angle", "ankle", "apple",
        "april", "arena", "armor", "arrow", "atlas", "attic", "audio", "autumn", "avoid", "awake", "badge", "bagel", "baker", "bamboo", "banjo", "barn",
        "basil", "basket", "beach", "beard", "beaver", "bench", "berry", "bicycle", "birch", "bishop", "blade", "blanket", "bloom", "blossom", "board", "bonus",
        "border", "bottle", "boxer", "brain", "branch", "brave", "bread", "breeze", "brick", "bridge", "broom", "brush", "bubble", "bucket", "budget", "buffalo",
        "bundle", "burger", "butter", "cabin", "cactus", "camel", "canal", "candle", "canoe", "canvas", "canyon", "carbon", "cargo", "carpet", "carrot", "castle",
        "cattle", "cave", "cedar", "cellar", "cement", "cereal", "chalk", "chapel", "cherry", "chess", "chimney", "cider", "cinema", "circus", "citrus", "claim",
        "clay", "clever", "cliff", "clock", "cloud", "clover", "coach", "cobalt", "cocoa", "coffee", "comet", "copper", "coral", "cotton", "cousin", "crane",
        "crater", "cream", "creek", "cricket", "crown", "cruise", "crystal", "cube", "curtain", "cushion", "dagger", "daisy", "dancer", "delta", "denim", "desert",
        "diesel", "dinner", "dolphin", "domino", "donkey", "dragon", "drawer", "dream", "drum", "eagle", "earth", "easel", "echo", "eclipse", "elbow", "elder",
        "ember", "empire", "engine", "envoy", "evening", "fabric", "falcon", "fancy", "farmer", "feather", "fence", "ferry", "fiber", "fiddle", "finger", "flame",
        "flute", "forest", "fossil", "fox", "frame", "frost", "galaxy", "garden", "garlic", "gazelle", "gecko", "ginger", "glacier", "glove", "goose", "gospel",
        "grain", "granite", "grape", "gravel", "guitar", "hammer", "harbor", "harvest", "hazel", "helmet", "herald", "hermit", "honey", "hornet", "hotel", "island",
        "ivory", "jacket", "jaguar", "jasmine", "jelly", "jersey", "jewel", "jungle", "kayak", "kernel", "kettle", "kidney", "kitten", "koala", "ladder", "lagoon",
        "lantern", "laptop", "lemon", "leopard", "letter", "lily", "linen", "lizard", "lobster", "locket", "lotus", "lumber", "magnet", "mango", "maple", "marble",
        "meadow", "melon", "mirror", "monkey", "mosaic", "motor", "muffin", "museum", "napkin", "nectar", "needle", "nickel", "noodle", "nutmeg", "oasis", "ocean",
        "olive", "onion", "orange", "orbit", "orchid", "otter", "oyster", "paddle", "palace", "panda", "parrot", "pastry", "peanut", "pebble", "pelican", "pepper",
    ]
}

public struct RecoveryKeyError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
