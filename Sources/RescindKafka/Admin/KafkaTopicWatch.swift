import Foundation

/// Whether a service's topics exist, for its `/ready`: asks the cluster's metadata (which
/// never creates a topic) until every topic has been seen once, then stops asking.
public final class KafkaTopicWatch: @unchecked Sendable {
    // Safe: `allSeen` is read and written only under `lock`; the rest is immutable.

    private let admin: KafkaAdmin
    /// The full topic names (with any prefix).
    public let topics: [String]
    private let lock = NSLock()
    private var allSeen = false

    public init(admin: KafkaAdmin, topics: [String]) {
        self.admin = admin
        self.topics = topics
    }

    private var seen: Bool {
        lock.lock()
        defer { lock.unlock() }
        return allSeen
    }

    private func markSeen() {
        lock.lock()
        allSeen = true
        lock.unlock()
    }

    /// `nil` once every topic exists; otherwise why the service is not ready (which topics
    /// are missing, or that the cluster did not answer).
    public func notReadyReason(timeout: Duration = .seconds(2)) async -> String? {
        if seen { return nil }
        do {
            let existing = try await admin.existingTopics(topics, timeout: timeout)
            let missing = topics.filter { existing[$0] == nil }
            guard missing.isEmpty else {
                return "Kafka topics missing: \(missing.joined(separator: ", ")) (provision them with `rescind-admin migrate kafka`)"
            }
            markSeen()
            return nil
        } catch {
            return "Kafka metadata unavailable: \(error)"
        }
    }
}
