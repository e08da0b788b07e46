import Dispatch
import Foundation

/// Waits for SIGTERM or SIGINT through dispatch signal sources (the default handlers
/// are ignored, so the process can clean up before exiting).
enum TerminationSignal {
    /// Returns the signal that arrived first.
    static func wait() async -> Int32 {
        let queue = DispatchQueue(label: "rescind.devbroker.signals")
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
        let sources = [SIGTERM, SIGINT].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { continuation.yield(number) }
            source.resume()
            return source
        }
        defer { sources.forEach { $0.cancel() } }
        for await number in stream { return number }
        return SIGTERM
    }
}
