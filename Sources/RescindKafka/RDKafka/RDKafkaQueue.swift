import CRdKafka

/// Owns one reference to an `rd_kafka_queue_t` and keeps its client handle alive.
final class RDKafkaQueue: @unchecked Sendable {
    // Safe: the pointer is immutable and released only in deinit; librdkafka queues
    // may be polled and referenced from any thread.

    let handle: RDKafkaHandle
    private let pointer: OpaquePointer

    private init(handle: RDKafkaHandle, pointer: OpaquePointer) {
        self.handle = handle
        self.pointer = pointer
    }

    deinit {
        rd_kafka_queue_destroy(pointer)
    }

    /// The client's main queue: delivery reports, errors and (when routed there) logs.
    static func main(of handle: RDKafkaHandle) -> RDKafkaQueue {
        RDKafkaQueue(handle: handle, pointer: handle.withPointer { rd_kafka_queue_get_main($0) })
    }

    /// The consumer queue: fetched messages, and after `rd_kafka_poll_set_consumer`
    /// everything the main queue carries, rebalances included.
    static func consumer(of handle: RDKafkaHandle) -> RDKafkaQueue {
        RDKafkaQueue(handle: handle, pointer: handle.withPointer { rd_kafka_queue_get_consumer($0) })
    }

    /// A fresh queue for the results of one asynchronous request (admin operations).
    static func temporary(for handle: RDKafkaHandle) -> RDKafkaQueue {
        RDKafkaQueue(handle: handle, pointer: handle.withPointer { rd_kafka_queue_new($0) })
    }

    func withPointer<T>(_ body: (OpaquePointer) throws -> T) rethrows -> T {
        try body(pointer)
    }

    /// Blocks up to `timeoutMilliseconds` for one event and lends it to `body`; the event
    /// is destroyed when `body` returns, so anything kept must be copied inside `body`.
    /// Returns `nil` when no event arrived in time.
    func poll<T>(timeoutMilliseconds: Int32, _ body: (RDKafkaEvent) throws -> T) rethrows -> T? {
        guard let event = rd_kafka_queue_poll(pointer, Int32(timeoutMilliseconds)) else { return nil }
        defer { rd_kafka_event_destroy(event) }
        return try body(RDKafkaEvent(pointer: event))
    }
}
