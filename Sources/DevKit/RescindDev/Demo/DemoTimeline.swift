import Foundation
import RescindObservability
import Synchronization

/// The demo's readable timeline: who did what, when, relative to the demo's start.
final class DemoTimeline: Sendable {
    private let start = ContinuousClock.now
    private let names = Mutex<[UUID: String]>([:])
    /// Everything written so far, for `waitFor`.
    private let written = Mutex<[String]>([])

    func name(_ id: UUID, _ name: String) {
        names.withLock { $0[id] = name }
    }

    func nameOf(_ id: UUID) -> String {
        names.withLock { $0[id] } ?? String(id.uuidString.lowercased().prefix(8))
    }

    /// `[+  12.345 s] actor           what happened`
    func log(_ actor: String, _ message: String) {
        let elapsed = ContinuousClock.now - start
        let seconds = elapsed.seconds
        let stamp = String(format: "[+%8.3f s]", seconds)
        let padded = actor.count >= 24 ? actor : actor + String(repeating: " ", count: 24 - actor.count)
        emit("\(stamp) \(padded) \(message)\n")
    }

    func section(_ title: String) {
        emit("\n── \(title) " + String(repeating: "─", count: max(0, 70 - title.count)) + "\n")
    }

    /// Waits until a line containing `text` has been written, at most `timeout`; whether it was.
    func waitFor(_ text: String, timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while true {
            if written.withLock({ $0.contains { $0.contains(text) } }) { return true }
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(100))
        }
    }

    /// Unbuffered, so the timeline interleaves correctly with the progress bar and child logs.
    private func emit(_ text: String) {
        written.withLock { $0.append(text) }
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}
