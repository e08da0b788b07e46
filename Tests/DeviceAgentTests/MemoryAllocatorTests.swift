#if os(Linux)
import Foundation
import Glibc
import RescindDevKit
import RescindLifecycle
import Testing

/// The agent's allocator setting (`MemoryAllocator.configureAgent`): a large block freed goes
/// back to the system, and so does the next one, however large the blocks freed before it.
///
/// Checked in a fresh process, as the agent sets it first thing in `main`: in this test process,
/// earlier tests have left free heap that can serve any block without a mapping, whatever the
/// threshold.
@Suite struct MemoryAllocatorTests {
    static let probeVariable = "RESCIND_TEST_ALLOCATOR_PROBE"

    /// Whether glibc served `pointer` with a mapping of its own (returned to the system at `free`):
    /// bit 1 (`IS_MMAPPED`) of the chunk's size word, the word just before the pointer.
    static func isMapped(_ pointer: UnsafeMutableRawPointer) -> Bool {
        pointer.load(fromByteOffset: -MemoryLayout<UInt>.size, as: UInt.self) & 0x2 != 0
    }

    @Test func aPageSizedBlockIsMappedEvenAfterALargerOneWasFreed() async throws {
        if ProcessInfo.processInfo.environment[Self.probeVariable] != nil {
            try Self.probe()
            return
        }
        // This test binary again, running only this test, as the probe.
        let result = try await ChildProcess.run(
            URL(fileURLWithPath: CommandLine.arguments[0]), ["--testing-library", "swift-testing", "--filter", "MemoryAllocatorTests"],
            environment: ProcessInfo.processInfo.environment.merging([Self.probeVariable: "1"]) { $1 }, timeout: .seconds(120))
        #expect(result.status == 0 && !result.timedOut, "the probe failed:\n\(result.output)")
        #expect(result.output.contains("aPageSizedBlockIsMappedEvenAfterALargerOneWasFreed() passed"), "the probe did not run:\n\(result.output)")
    }

    static func probe() throws {
        MemoryAllocator.configureAgent(environment: [:])
        let large = try #require(malloc(8 << 20))
        #expect(isMapped(large))
        free(large)
        // glibc's default would now serve blocks up to 8 MiB from its heap, which keeps them
        // after `free`: the 2 MB page below would stay in the process.
        let page = try #require(malloc(2 << 20))
        defer { free(page) }
        #expect(isMapped(page))
        let small = try #require(malloc(64 << 10))
        defer { free(small) }
        #expect(!isMapped(small))
    }
}
#endif
