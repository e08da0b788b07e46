#if os(Linux)
import CMalloc
#endif

/// How the device agent asks glibc's allocator to give memory back.
///
/// glibc serves a block of 128 KiB or more with its own `mmap`, returned to the system at
/// `free`, but raises that threshold to the size of every such block freed (up to 32 MiB):
/// once the first 2 MB change-feed page is freed, later pages come from the heap, and the
/// heap keeps what it frees for the next allocation. Measured with the bench's memory section
/// (docs/benchmarks.md, "The agent's memory"): an agent that syncs and rotates 10,000 records
/// peaked at 63.0–63.6 MiB, and at 58.1–58.4 with the threshold fixed, its sync and rotation
/// times unchanged. Fixing it costs one `mmap` and `munmap` (and the page faults of a fresh
/// mapping) per large block: a few per thousand records for an agent.
///
/// Not the threshold for the services: it took the grant service's peak from 149 to 125 MiB
/// over the fan-out, but its CPU per 10,000-record revocation from 0.19–0.22 s to 0.25–0.31 s
/// (every page and upload batch a fresh mapping) and slowed the revocation's download and
/// upload by a fifth. A service gets one arena per core instead (`configureService`).
///
/// Also at most two malloc arenas instead of eight per core: the agent's threads (NIO, the
/// cooperative pool, GRDB's queue, librdkafka's) never contend enough for more to pay for the
/// memory each keeps (a 10,000-record rotation peaked at 89 MiB with eight per core, 79 with
/// two, before its download streamed; `deploy/` used to set it with `MALLOC_ARENA_MAX=2`).
///
/// A value set in the environment (`MALLOC_MMAP_THRESHOLD_`, `MALLOC_ARENA_MAX`, which glibc
/// reads itself before `main`) is left as the operator set it. Call once, first thing in `main`.
public enum MemoryAllocator {
    /// The fixed threshold: glibc's own starting value.
    public static let mmapThreshold: Int32 = 128 << 10
    public static let arenas: Int32 = 2

    /// A service: one malloc arena per core (at least two) instead of eight, the large-block
    /// threshold left to glibc. Each arena keeps what its threads freed; with eight per core the
    /// grant service's peak over the commit and fan-out sections was 158 MiB, with one per core
    /// on this 2-core machine 115 MiB, its CPU per revocation unchanged (docs/benchmarks.md).
    public static func configureService(environment: [String: String], processors: Int) {
        #if os(Linux)
        if environment["MALLOC_ARENA_MAX"] == nil { _ = mallopt(M_ARENA_MAX, Int32(clamping: max(2, processors))) }
        #endif
    }

    public static func configureAgent(environment: [String: String]) {
        #if os(Linux)
        if environment["MALLOC_MMAP_THRESHOLD_"] == nil { _ = mallopt(M_MMAP_THRESHOLD, mmapThreshold) }
        if environment["MALLOC_ARENA_MAX"] == nil { _ = mallopt(M_ARENA_MAX, arenas) }
        #endif
    }
}
