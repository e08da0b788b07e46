/// A 256-bit symmetric key (AES-256 key, family member key, master key, ephemeral erasure key)
/// held in guarded memory.
///
/// The bytes live in a `sodium_malloc` region (mlocked, guard pages, read-only) and are zeroed
/// when the last copy of the key is released. There is deliberately no way to read the bytes
/// out: persist a key by wrapping it (`AESKeyWrap`, `FMKWrapping`). Not `Codable`; equality is
/// constant-time; `description` is redacted.
public struct SecretKey: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// 32 bytes: every key in the Rescind hierarchy is AES-256 sized.
    public static let byteCount = 32

    let storage: GuardedBuffer

    /// A fresh random key from libsodium's CSPRNG.
    public init() {
        storage = GuardedBuffer(randomCount: Self.byteCount)
    }

    /// Imports a key from raw bytes (for example a 32-byte key file read from disk).
    ///
    /// The bytes are copied into guarded memory, then `bytes` is zeroed and emptied so the
    /// unprotected copy does not linger. Copies the caller made before are not reachable.
    /// - Throws: `CryptoError.invalidKeyLength` unless `bytes` has exactly 32 bytes (then
    ///   `bytes` is left untouched).
    public init(bytes: inout [UInt8]) throws {
        guard bytes.count == Self.byteCount else {
            throw CryptoError(.invalidKeyLength)
        }
        storage = Sodium.moveIntoGuardedMemory(&bytes)
    }

    /// Wraps guarded bytes produced inside the module (HKDF, unwrap, Argon2id).
    init(storage: GuardedBuffer) {
        precondition(storage.count == Self.byteCount)
        self.storage = storage
    }

    /// Scoped read access to the key bytes, for the module's C calls only.
    @inline(__always)
    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try storage.withUnsafeBytes(body)
    }

    /// Constant-time comparison of the key bytes.
    public static func == (lhs: SecretKey, rhs: SecretKey) -> Bool {
        lhs.storage.constantTimeEquals(rhs.storage)
    }

    public var description: String { "SecretKey(redacted)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
