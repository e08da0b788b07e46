import Foundation

/// Matches delivery reports to the callers waiting for them: each message carries a
/// registry id as its librdkafka opaque, and the poll thread resolves that id.
final class DeliveryRegistry: @unchecked Sendable {
    typealias Completion = @Sendable (Result<KafkaDelivery, KafkaError>) -> Void

    // Safe: every mutable property is read and written only while holding `lock`;
    // completions are called after the lock is released.
    private let lock = NSLock()
    private var nextID: UInt = 1
    private var pending: [UInt: Completion] = [:]
    private var isClosed = false

    /// Returns the id to attach to the message, or `nil` once the producer is shutting down.
    func register(_ completion: @escaping Completion) -> UInt? {
        lock.withLock {
            guard !isClosed else { return nil }
            let id = nextID
            nextID += 1
            pending[id] = completion
            return id
        }
    }

    func resolve(_ id: UInt, with result: Result<KafkaDelivery, KafkaError>) {
        let completion = lock.withLock { pending.removeValue(forKey: id) }
        completion?(result)
    }

    /// Refuses new registrations; pending ones still resolve normally.
    func close() {
        lock.withLock { isClosed = true }
    }

    /// Fails everything still waiting (used last in shutdown, when no report can come anymore).
    func failAll(with error: KafkaError) {
        let waiting = lock.withLock {
            defer { pending = [:] }
            return Array(pending.values)
        }
        for completion in waiting { completion(.failure(error)) }
    }
}
