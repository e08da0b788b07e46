import CSodium

/// HMAC-SHA256 (RFC 2104, FIPS 198-1) through libsodium, with a key of any length.
public enum HMACSHA256 {
    public static let byteCount = 32

    /// The 32-byte tag of `message` under `key` (any length; RFC 4231's vectors hold).
    static func authenticate(_ message: [UInt8], key: UnsafeRawBufferPointer) -> [UInt8] {
        Sodium.ensureInitialized()
        var state = crypto_auth_hmacsha256_state()
        var tag = [UInt8](repeating: 0, count: byteCount)
        var empty: UInt8 = 0
        if let base = key.baseAddress, key.count > 0 {
            _ = crypto_auth_hmacsha256_init(&state, base.assumingMemoryBound(to: UInt8.self), key.count)
        } else {
            _ = crypto_auth_hmacsha256_init(&state, &empty, 0)
        }
        if !message.isEmpty {
            message.withUnsafeBufferPointer { _ = crypto_auth_hmacsha256_update(&state, $0.baseAddress!, UInt64($0.count)) }
        }
        _ = crypto_auth_hmacsha256_final(&state, &tag)
        withUnsafeMutableBytes(of: &state) { Sodium.zero($0) }
        return tag
    }

    /// As above, with the key given as bytes (public data or test vectors).
    public static func authenticate(_ message: [UInt8], key: [UInt8]) -> [UInt8] {
        key.withUnsafeBytes { authenticate(message, key: $0) }
    }

    /// The tag of `message` under a secret key, without copying the key out of guarded memory.
    public static func authenticate(_ message: [UInt8], key: SecretKey) -> [UInt8] {
        key.withUnsafeBytes { authenticate(message, key: $0) }
    }
}
