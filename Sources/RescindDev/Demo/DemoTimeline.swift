import Foundation
import Synchronization

/// The demo's readable timeline: who did what, when, relative to the demo's start.
final class DemoTimeline: Sendable {
    private let start = ContinuousClock.now
    private let names = Mutex<[UUID: String]>([:])

    func name(_ id: UUID, _ name: String) {
        names.withLock { $0[id] = name }
    }

    func nameOf(_ id: UUID) -> String {
        names.withLock { $0[id] } ?? String(id.uuidString.lowercased().prefix(8))
    }

    /// `[+  12.345 s] actor           what happened`
    func log(_ actor: String, _ message: String) {
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let stamp = String(format: "[+%8.3f s]", seconds)
        let padded = actor.count >= 24 ? actor : actor + String(repeating: " ", count: 24 - actor.count)
        emit("\(stamp) \(padded) \(message)\n")
    }

    func section(_ title: String) {
        emit("\n── \(title) " + String(repeating: "─", count: max(0, 70 - title.count)) + "\n")
    }

    /// Unbuffered, so the timeline interleaves correctly with the progress bar and child logs.
    private func emit(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}
