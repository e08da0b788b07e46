import Dispatch

/// Runs blocking librdkafka calls (flush, synchronous commit, waiting for an admin
/// result) on a private serial dispatch queue and resumes the caller when done, so
/// they never occupy a thread of Swift's cooperative pool.
///
/// Serial on purpose: a client's commits reach librdkafka in the order they were asked for.
struct BlockingExecutor: Sendable {
    private let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try body() })
            }
        }
    }
}

extension BlockingExecutor {
    /// Blocks the calling thread until every block submitted so far has run.
    /// Only for dedicated threads (the consumer's poll thread), never for async code.
    func drain() {
        queue.sync {}
    }
}
