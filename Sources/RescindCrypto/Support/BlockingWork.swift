import Dispatch

/// Runs CPU-heavy or blocking work (Argon2id, batch re-encryption, a file written and synced)
/// on a Dispatch queue so it never occupies a thread of Swift's cooperative pool, whose threads
/// are as many as cores.
package enum BlockingWork {
    private static let queue = DispatchQueue(
        label: "rescind.crypto.blocking-work",
        qos: .userInitiated,
        attributes: .concurrent
    )

    package static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try work() })
            }
        }
    }
}
