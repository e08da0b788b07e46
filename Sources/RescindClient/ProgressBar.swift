import Foundation
import Synchronization

/// A one-line progress bar of a revocation on standard error, redrawn in place (plain lines
/// when standard error is not a terminal, so logs stay readable): the `rescind` CLI's and
/// the demo's.
public final class ProgressBar: Sendable {
    private let label: String
    private let width = 30
    private let isTerminal = isatty(STDERR_FILENO) == 1
    private let lastPhase = Mutex<String>("")

    public init(label: String) {
        self.label = label
    }

    public func update(_ progress: RevocationProgress) {
        let total = max(progress.recordsTotal, 1)
        let filled = progress.recordsDone * width / total
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        // A catch-up re-encrypts records edited while the revocation ran (none is overwritten).
        let phase = progress.phase == .catchingUp
            ? "catching up with edits made meanwhile (round \(progress.catchUps))" : progress.phase.rawValue
        let line = "\(label) \(bar) \(progress.recordsDone)/\(progress.recordsTotal) \(phase)"
        if isTerminal {
            FileHandle.standardError.write(Data("\r\u{1B}[2K\(line)".utf8))
            if progress.phase == .committed { FileHandle.standardError.write(Data("\n".utf8)) }
        } else {
            // Without a terminal, one line per phase.
            let changed = lastPhase.withLock { last in
                defer { last = progress.phase.rawValue }
                return last != progress.phase.rawValue
            }
            if changed || progress.phase == .committed { FileHandle.standardError.write(Data("\(line)\n".utf8)) }
        }
    }
}
