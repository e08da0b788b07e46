import CRdKafka

/// Owns one `rd_kafka_t` (a producer or consumer client) and destroys it in `deinit`.
///
/// Queues obtained from the handle (`RDKafkaQueue`) retain it, so the handle outlives them.
final class RDKafkaHandle: @unchecked Sendable {
    // Safe: the pointer is immutable and freed only in deinit; every librdkafka call made
    // through it (produce, poll, commit, assign, flush, …) is documented as thread-safe.

    enum Kind {
        case producer
        case consumer
    }

    /// Event types delivered on the main queue instead of through callbacks (`RD_KAFKA_EVENT_*`).
    struct Events: OptionSet {
        let rawValue: Int32

        static let deliveryReports = Events(rawValue: RD_KAFKA_EVENT_DR)
        static let rebalances = Events(rawValue: RD_KAFKA_EVENT_REBALANCE)
        static let errors = Events(rawValue: RD_KAFKA_EVENT_ERROR)
        static let logs = Events(rawValue: RD_KAFKA_EVENT_LOG)
    }

    private let pointer: OpaquePointer

    /// Creates the client.
    /// - Parameters:
    ///   - properties: librdkafka configuration properties, applied in key order.
    ///   - events: the events to deliver on the main queue instead of callbacks.
    ///   - logsOnMainQueue: route librdkafka's logs to the main queue (needs `log.queue=true`)
    ///     so that the poll thread forwards them to a `Logger`.
    init(kind: Kind, properties: [String: String], events: Events, logsOnMainQueue: Bool) throws {
        guard let configuration = rd_kafka_conf_new() else {
            throw KafkaError(code: .clientCreation, detail: "rd_kafka_conf_new failed")
        }
        do {
            for (key, value) in properties.sorted(by: { $0.key < $1.key }) {
                try Self.set(key, value, on: configuration)
            }
        } catch {
            rd_kafka_conf_destroy(configuration)
            throw error
        }
        rd_kafka_conf_set_events(configuration, events.rawValue)

        var errorText = [CChar](repeating: 0, count: 512)
        let type = kind == .producer ? RD_KAFKA_PRODUCER : RD_KAFKA_CONSUMER
        guard let handle = rd_kafka_new(type, configuration, &errorText, errorText.count) else {
            // rd_kafka_new takes ownership of the configuration only on success.
            rd_kafka_conf_destroy(configuration)
            throw KafkaError(code: .clientCreation, detail: String(cStringBuffer: errorText))
        }
        pointer = handle
        if logsOnMainQueue {
            rd_kafka_set_log_queue(handle, nil)
        }
    }

    deinit {
        rd_kafka_destroy(pointer)
    }

    func withPointer<T>(_ body: (OpaquePointer) throws -> T) rethrows -> T {
        try body(pointer)
    }

    /// Sets one property. The error names the property but never echoes its value,
    /// which may be a credential (`sasl.password`, …).
    private static func set(_ key: String, _ value: String, on configuration: OpaquePointer) throws {
        var errorText = [CChar](repeating: 0, count: 512)
        let result = rd_kafka_conf_set(configuration, key, value, &errorText, errorText.count)
        switch result {
        case RD_KAFKA_CONF_OK:
            return
        case RD_KAFKA_CONF_UNKNOWN:
            throw KafkaError(code: .configuration, detail: "unknown configuration property '\(key)'")
        default:
            throw KafkaError(code: .configuration, detail: "invalid value for configuration property '\(key)'")
        }
    }
}

extension String {
    /// Decodes a NUL-terminated C string held in a Swift array (librdkafka's `errstr` buffers).
    init(cStringBuffer buffer: [CChar]) {
        self = buffer.withUnsafeBufferPointer { pointer in
            String(decoding: pointer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }
}
