#if os(Linux)
import CMalloc
#endif

/// How a long-running Rescind process asks glibc's allocator to give memory back.
///
/// glibc serves a block of 128 KiB or more with its own `mmap`, returned to the system at
/// `free`, but raises that threshold to the size of every such block freed (up to 32 MiB):
/// once the first 2 MB change-feed page or upload batch is freed, later ones come from the
/// heap, and the heap keeps what it frees for the next allocation. Measured with the bench's
/// memory and fan-out sections (BENCHMARKS.md, "The agent's memory"): an agent that syncs and
/// rotates 10,000 records peaked at 63.0 MiB against 58.1–58.4 with the threshold fixed, and
/// the grant service over the fan-out and throughput sections at 148.8 MiB against 124.6,
/// with the latencies and rates within their run-to-run noise. Fixing it costs one `mmap`
/// and `munmap` per large block, a few per thousand records.
///
/// A value set in the environment (`MALLOC_MMAP_THRESHOLD_`, `MALLOC_ARENA_MAX`, which glibc
/// reads itself before `main`) is left as the operator set it. Call once, first thing in `main`.
public enum MemoryAllocator {
    /// The fixed threshold: glibc's own starting value.
    public static let mmapThreshold: Int32 = 128 << 10

    /// A service: large blocks go back to the system at `free` (the arenas stay glibc's
    /// default, eight per core, for the request threads).
    public static func configureService(environment: [String: String]) {
        fixMmapThreshold(environment)
    }

    /// The device agent: large blocks go back at `free`, and at most two malloc arenas instead
    /// of eight per core (its threads never contend enough for more to pay for the memory each
    /// keeps; `deploy/` sets the same with `MALLOC_ARENA_MAX=2`).
    public static func configureAgent(environment: [String: String]) {
        fixMmapThreshold(environment)
        #if os(Linux)
        if environment["MALLOC_ARENA_MAX"] == nil { _ = mallopt(M_ARENA_MAX, 2) }
        #endif
    }

    private static func fixMmapThreshold(_ environment: [String: String]) {
        #if os(Linux)
        if environment["MALLOC_MMAP_THRESHOLD_"] == nil { _ = mallopt(M_MMAP_THRESHOLD, mmapThreshold) }
        #endif
    }
}
