#if os(Linux)
import Glibc
import RescindLifecycle
import Testing

/// The agent's and the services' allocator setting (`MemoryAllocator`): a large block freed goes
/// back to the system, and so does the next one, however large the blocks freed before it.
@Suite struct MemoryAllocatorTests {
    /// Whether glibc served `pointer` with a mapping of its own (returned to the system at `free`):
    /// bit 1 (`IS_MMAPPED`) of the chunk's size word, the word just before the pointer.
    static func isMapped(_ pointer: UnsafeMutableRawPointer) -> Bool {
        pointer.load(fromByteOffset: -MemoryLayout<UInt>.size, as: UInt.self) & 0x2 != 0
    }

    @Test func aPageSizedBlockIsMappedEvenAfterALargerOneWasFreed() throws {
        MemoryAllocator.configureAgent(environment: [:])
        let large = try #require(malloc(8 << 20))
        #expect(Self.isMapped(large))
        free(large)
        // glibc's default would now serve blocks up to 8 MiB from its heap, which keeps them
        // after `free`: the 2 MB page below would stay in the process.
        let page = try #require(malloc(2 << 20))
        defer { free(page) }
        #expect(Self.isMapped(page))
        let small = try #require(malloc(64 << 10))
        defer { free(small) }
        #expect(!Self.isMapped(small))
    }
}
#endif
