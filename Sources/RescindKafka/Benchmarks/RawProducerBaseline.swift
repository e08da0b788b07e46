import Foundation

/// A MEASURING BASELINE, not an API for production code: librdkafka's producer driven
/// directly, the fastest this machine can get acknowledged messages into a cluster.
/// `rescind-bench` runs it next to the grant service's outbox relay, with the same payloads
/// and the same delivery guarantees, and reports the relay's events/s as a ratio of it.
///
/// One message is produced and acknowledged first, untimed, so that connecting and the
/// idempotent producer's id request are not counted (the relay's producer is long-lived).
/// The loop is the one librdkafka's documentation recommends: produce without waiting,
/// serve delivery reports as they come (polling without blocking every 1,000 messages, and
/// for up to 10 ms when the local queue is full), then wait for the last report. Settings
/// are `KafkaProducerConfiguration`'s (idempotence, `acks=all`, its `linger`), so the gap to
/// the relay is the relay's own work: reading the outbox rows, awaiting each batch's
/// acknowledgements before marking the rows sent, one transaction per batch.
///
/// Lives here because this is the only module that may call librdkafka; it is not the product's
/// API but the dev kit's (`@_spi(DevKit)`: only `rescind-bench` and the tests import it).
@_spi(DevKit) public enum RawProducerBaseline {
    /// What one loop achieved.
    public struct Outcome: Sendable {
        /// Messages the cluster acknowledged (the untimed warm-up message not included).
        public let acknowledged: Int
        /// From the first timed produce call to the last delivery report.
        public let elapsed: Duration
    }

    /// Produces `count` copies of `value` (key `key`) to `topic` and waits until every one
    /// is acknowledged or failed, or `timeout` passes. Blocks the calling thread: call it
    /// from a detached thread or a Dispatch queue, not from Swift's cooperative pool.
    /// - Returns: how many messages the cluster acknowledged, and how long that took.
    /// - Throws: `KafkaError` `.clientCreation`/`.configuration` for the client, `.enqueue`
    ///   when librdkafka refuses a message for a reason other than a full queue, `.flush`
    ///   when reports are still missing after `timeout`.
    public static func produce(
        count: Int, topic: String, key: Data, value: Data, configuration: KafkaProducerConfiguration,
        timeout: Duration = .seconds(120)
    ) throws -> Outcome {
        var properties = configuration.properties
        // No log routing to serve: librdkafka's own logger prints warnings and errors.
        properties["log.queue"] = "false"
        let handle = try RDKafkaHandle(kind: .producer, properties: properties, events: [.deliveryReports], logsOnMainQueue: false)
        let reports = RDKafkaQueue.main(of: handle)
        var acknowledged = 0
        var failed = 0

        func serve(waitingMilliseconds: Int32) {
            var wait = waitingMilliseconds
            while let _ = reports.poll(timeoutMilliseconds: wait, { event in
                guard event.kind == .deliveryReport else { return }
                event.forEachMessage { message in
                    if message.code == .noError { acknowledged += 1 } else { failed += 1 }
                }
            }) {
                wait = 0
            }
        }

        let deadline = ContinuousClock.now + timeout
        func awaitReports(_ expected: Int) throws {
            while acknowledged + failed < expected {
                guard ContinuousClock.now < deadline else {
                    throw KafkaError(code: .flush, detail: "\(expected - acknowledged - failed) delivery report(s) missing after the timeout")
                }
                serve(waitingMilliseconds: 100)
            }
        }

        let warmUp = key.withUnsafeBytes { key in
            value.withUnsafeBytes { value in
                handle.produce(topic: topic, key: key.baseAddress, keyCount: key.count, value: value.baseAddress, valueCount: value.count)
            }
        }
        guard warmUp == .noError else {
            throw KafkaError(code: .enqueue, rdKafka: warmUp, detail: "the baseline could not queue a message for topic '\(topic)'")
        }
        try awaitReports(1)
        acknowledged = 0
        failed = 0

        let start = ContinuousClock.now
        var produced = 0
        try key.withUnsafeBytes { key in
            try value.withUnsafeBytes { value in
                while produced < count {
                    let result = handle.produce(
                        topic: topic, key: key.baseAddress, keyCount: key.count, value: value.baseAddress, valueCount: value.count
                    )
                    switch result {
                    case .noError:
                        produced += 1
                        if produced % 1000 == 0 { serve(waitingMilliseconds: 0) }
                    case .queueFull:
                        serve(waitingMilliseconds: 10)
                    default:
                        throw KafkaError(code: .enqueue, rdKafka: result, detail: "the baseline could not queue a message for topic '\(topic)'")
                    }
                }
            }
        }
        try awaitReports(count)
        return Outcome(acknowledged: acknowledged, elapsed: ContinuousClock.now - start)
    }
}
