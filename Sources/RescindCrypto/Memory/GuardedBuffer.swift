import CSodium

/// Owns one `sodium_malloc` region holding secret bytes.
///
/// The region is `mlock`ed (kept out of swap where the memlock limit allows), sits between
/// guard pages, is made read-only once initialised, and is zeroed by `sodium_free` when the
/// last reference goes away. The pointer is reachable only through `withUnsafeBytes`.
///
/// `@unchecked Sendable`: the bytes are written only inside `init`, before the instance is
/// published, and the pages are then `PROT_READ`; afterwards every access is a read, so
/// concurrent readers on any thread are safe.
final class GuardedBuffer: @unchecked Sendable {
    let count: Int
    private let base: UnsafeMutableRawPointer

    /// Allocates `count` guarded bytes and lets `initialize` fill all of them.
    ///
    /// If `initialize` throws, the region is zeroed and released before the error propagates.
    init(count: Int, initializingWith initialize: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows {
        precondition(count > 0, "GuardedBuffer needs at least one byte")
        Sodium.ensureInitialized()
        guard let base = sodium_malloc(count) else {
            // Out of address space or mmap refused: as fatal as any failed Swift allocation.
            fatalError("sodium_malloc(\(count)) failed")
        }
        self.count = count
        self.base = base
        // deinit runs (and zeroes) if this throws: every stored property is set.
        try initialize(UnsafeMutableRawBufferPointer(start: base, count: count))
        _ = sodium_mprotect_readonly(base)
    }

    /// `count` bytes from libsodium's CSPRNG (`getrandom`).
    convenience init(randomCount count: Int) {
        self.init(count: count) { bytes in
            randombytes_buf(bytes.baseAddress!, bytes.count)
        }
    }

    /// A guarded copy of `bytes`.
    convenience init(copying bytes: UnsafeRawBufferPointer) {
        self.init(count: bytes.count) { target in
            target.copyMemory(from: bytes)
        }
    }

    deinit {
        sodium_free(base)
    }

    /// Scoped read access; the pointer must not escape `body`.
    @inline(__always)
    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// Constant-time comparison (`sodium_memcmp`); lengths are not secret.
    func constantTimeEquals(_ other: GuardedBuffer) -> Bool {
        guard count == other.count else { return false }
        if self === other { return true }
        return sodium_memcmp(base, other.base, count) == 0
    }
}
