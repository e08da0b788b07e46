import CSodium

/// Cryptographically secure random bytes (libsodium's `randombytes_buf`), for
/// nonces, challenges and bearer tokens. Never blocks once the system is seeded.
public enum SecureRandom {
    public static func bytes(count: Int) -> [UInt8] {
        precondition(count >= 0, "a byte count cannot be negative")
        Sodium.ensureInitialized()
        var bytes = [UInt8](repeating: 0, count: count)
        bytes.withUnsafeMutableBytes { buffer in
            if let base = buffer.baseAddress { randombytes_buf(base, buffer.count) }
        }
        return bytes
    }
}
