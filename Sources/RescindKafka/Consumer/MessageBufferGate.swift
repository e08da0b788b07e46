import Foundation

/// Flow control between the poll thread and the message sequence: the poll thread
/// stops fetching while `capacity` messages wait unread, and everyone learns here
/// that the consumer is closing.
final class MessageBufferGate: @unchecked Sendable {
    // Safe: `buffered` and `closing` are only accessed while holding `condition`'s lock.
    private let condition = NSCondition()
    private let capacity: Int
    private var buffered = 0
    private var closing = false

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Poll thread: blocks while the buffer is full. Returns `false` once closing.
    func waitForRoom() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while buffered >= capacity, !closing {
            condition.wait()
        }
        return !closing
    }

    /// Poll thread: one more message is about to be handed to the sequence.
    func willBuffer() {
        condition.withLock { buffered += 1 }
    }

    /// A buffered message left the buffer (read, or refused by a finished stream).
    func didUnbuffer() {
        condition.withLock {
            buffered -= 1
            condition.signal()
        }
    }

    func beginClosing() {
        condition.withLock {
            closing = true
            condition.broadcast()
        }
    }

    var isClosing: Bool {
        condition.withLock { closing }
    }
}
