import CSodium

/// libsodium process-wide initialisation.
enum Sodium {
    /// `sodium_init()` run exactly once: Swift initialises a global `let` lazily under
    /// `swift_once`, so concurrent first callers wait for one initialisation.
    private static let initialized: Bool = sodium_init() >= 0

    /// Call before any libsodium function; costs one load after the first call.
    @inline(__always)
    static func ensureInitialized() {
        precondition(initialized, "sodium_init() failed: libsodium cannot be used")
    }

    /// Overwrites `bytes` with zeros in a way the compiler cannot elide.
    static func zero(_ bytes: UnsafeMutableRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        sodium_memzero(base, bytes.count)
    }

    /// Copies `source` into guarded memory, then zeroes and empties `source`.
    ///
    /// Only the array's own storage is zeroed: copies the caller made earlier (or a storage
    /// buffer shared copy-on-write with another array) are out of reach.
    static func moveIntoGuardedMemory(_ source: inout [UInt8]) -> GuardedBuffer {
        let buffer = source.withUnsafeBytes { GuardedBuffer(copying: $0) }
        source.withUnsafeMutableBytes { zero($0) }
        source.removeAll()
        return buffer
    }
}

extension Array where Element == UInt8 {
    /// Overwrites this array's own storage with zeros in a way the compiler cannot elide: the
    /// last use of a secret read into it (a seed, a token, a passphrase). Copies made earlier are
    /// out of reach.
    public mutating func wipe() {
        withUnsafeMutableBytes { Sodium.zero($0) }
    }
}
