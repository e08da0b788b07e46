import Foundation

/// Gathers the delivery results of one `send(_:)` batch and resumes its caller when
/// the last one is in.
final class BatchCollector: @unchecked Sendable {
    // Safe: `results` and `remaining` are only accessed while holding `lock`; the
    // continuation is resumed exactly once, by whoever sets the last result, outside the lock.
    private let lock = NSLock()
    private var results: [Result<KafkaDelivery, KafkaError>?]
    private var remaining: Int
    private let continuation: CheckedContinuation<[Result<KafkaDelivery, KafkaError>], Never>

    init(count: Int, continuation: CheckedContinuation<[Result<KafkaDelivery, KafkaError>], Never>) {
        results = Array(repeating: nil, count: count)
        remaining = count
        self.continuation = continuation
    }

    func set(_ index: Int, _ result: Result<KafkaDelivery, KafkaError>) {
        let finished: [Result<KafkaDelivery, KafkaError>]? = lock.withLock {
            guard results[index] == nil else { return nil }
            results[index] = result
            remaining -= 1
            return remaining == 0 ? results.map { $0! } : nil
        }
        if let finished { continuation.resume(returning: finished) }
    }
}
