import Foundation
import CLibPQ
import RescindObservability

/// Is the server there at all? The question a bounded wait asks before it gives up: a statement
/// (or a wait for a pooled connection) that outlasts `callTimeout` may be slow work on a live
/// server — a revocation's commit over a large family member — or a server that stopped
/// answering. Only the second may end the call.
extension LibPQConnection {
    /// Opens a fresh connection's start-up exchange with the server (`PQpingParams`: no login,
    /// no statement) and waits for its answer at most `bound` (libpq's `connect_timeout`, whole
    /// seconds, at least 2). Blocks the calling thread.
    /// - Returns: `true` when the server answered that it accepts connections.
    static func serverAnswers(_ parameters: [(keyword: String, value: String)], within bound: Duration) -> Bool {
        let seconds = max(2, Int(bound.seconds.rounded(.up)))
        let probe = parameters.filter { $0.keyword != "connect_timeout" } + [("connect_timeout", String(seconds))]
        return withKeywordArrays(probe) { keywords, values in PQpingParams(keywords, values, 0) } == PQPING_OK
    }

    /// `serverAnswers` on a thread of its own, for callers on Swift's cooperative pool.
    static func serverAnswers(_ parameters: [(keyword: String, value: String)], within bound: Duration) async -> Bool {
        await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: serverAnswers(parameters, within: bound)) }
            thread.name = "rescind.postgres.probe"
            thread.start()
        }
    }
}

