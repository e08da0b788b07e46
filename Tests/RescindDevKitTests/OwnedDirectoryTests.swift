import Foundation
import RescindDevKit
import Testing

/// The adversary: whatever kills a run before it removes its scratch directories (SIGKILL, a
/// test's time limit), and the kernel handing the dead owner's pid to another process. The
/// sweep removes exactly the directories whose owner is gone, and leaves the rest.
@Suite("OwnedDirectory") struct OwnedDirectoryTests {
    @Test("the sweep removes what a dead or replaced owner left, and keeps what is kept or still owned")
    func sweepRemovesOnlyWhatIsOrphaned() async throws {
        let parent = FileManager.default.temporaryDirectory.appendingPathComponent("rescind-owned-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: parent) }
        // Its owner ran and is gone: a child that exited.
        let orphaned = parent.appendingPathComponent("run-orphaned")
        let child = try ChildProcess(name: "owner", executable: URL(fileURLWithPath: "/bin/true"), output: .inherit)
        _ = await child.exited()
        try FileManager.default.createDirectory(at: orphaned, withIntermediateDirectories: true)
        try Data("\(child.pid) 1\n".utf8).write(to: orphaned.appendingPathComponent(".owner"))
        // Its owner's pid now names another process (this one, started at another time).
        let reused = parent.appendingPathComponent("run-reused")
        try FileManager.default.createDirectory(at: reused, withIntermediateDirectories: true)
        try Data("\(ProcessInfo.processInfo.processIdentifier) 1\n".utf8).write(to: reused.appendingPathComponent(".owner"))
        // Owned by this process, which runs; kept on purpose; another prefix; no owner file at all.
        let owned = parent.appendingPathComponent("run-owned")
        try OwnedDirectory.create(owned)
        let kept = parent.appendingPathComponent("run-kept")
        try OwnedDirectory.create(kept)
        OwnedDirectory.keep(kept)
        let other = parent.appendingPathComponent("other-orphaned")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        try Data("\(child.pid) 1\n".utf8).write(to: other.appendingPathComponent(".owner"))
        let unowned = parent.appendingPathComponent("run-unowned")
        try FileManager.default.createDirectory(at: unowned, withIntermediateDirectories: true)

        let removed = OwnedDirectory.sweep(in: parent, prefix: "run-")

        #expect(Set(removed.map(\.lastPathComponent)) == ["run-orphaned", "run-reused"])
        for directory in [orphaned, reused] { #expect(!FileManager.default.fileExists(atPath: directory.path)) }
        for directory in [owned, kept, other, unowned] { #expect(FileManager.default.fileExists(atPath: directory.path)) }
        // A second sweep finds nothing more to do.
        #expect(OwnedDirectory.sweep(in: parent, prefix: "run-").isEmpty)
    }
}
