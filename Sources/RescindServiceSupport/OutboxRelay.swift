import Logging
import RescindKafka
import RescindPostgres
import RescindTracing
import ServiceLifecycle

/// Publishes an outbox table to Kafka in its order and marks each row sent only once the
/// broker acknowledged it: the grant service's `outbox` (what a commit announces) and the audit
/// service's `notification_outbox` (what the audit concluded, and command re-issues).
///
/// The rows are written in the business transaction; this relay sends them afterwards. Each
/// batch is claimed under a lease, published with no transaction open and no pool connection
/// held, and marked sent (`LeasedOutbox`): a broker outage holds no database resource hostage,
/// replicas share the work, a row whose delivery failed is released at once, and a crashed
/// relay's claim expires after the lease. At-least-once: consumers dedupe by the message's id.
/// The relay wakes on the table's NOTIFY and, as a safety net, on a poll (`NotifiedDrainLoop`).
/// A row written with a trace context is published under a `relay publish` producer span of
/// that trace, whose context the message's headers carry on.
public struct OutboxRelay<ID: PostgresArrayElement & PostgresDecodable & Sendable>: Service {
    /// A claimed row, read as what to publish.
    public struct Row: Sendable {
        public var order: Int64
        public var id: ID
        public var message: KafkaProducerMessage
        /// The trace the row was written in, if any.
        public var trace: TraceContext?

        public init(order: Int64, id: ID, message: KafkaProducerMessage, trace: TraceContext?) {
            self.order = order
            self.id = id
            self.message = message
            self.trace = trace
        }
    }

    public let outbox: LeasedOutbox<ID>
    public let loop: NotifiedDrainLoop
    public let producer: KafkaProducer
    /// The columns `read` decodes, the order and id columns among them.
    public let columns: [String]
    public let read: @Sendable (PostgresRow) throws -> Row
    /// Told how many rows each drain delivered (a counter).
    public let onDelivered: @Sendable (Int) -> Void
    /// Runs after every drain that cancellation did not cut short (a lag gauge).
    public let afterDrain: @Sendable () async -> Void
    /// Whether one more drain runs once graceful shutdown stopped the loop, before the producer
    /// closes: the audit service's last conclusions then go out with it.
    public let drainsOnShutdown: Bool

    public init(
        outbox: LeasedOutbox<ID>, loop: NotifiedDrainLoop, producer: KafkaProducer, columns: [String],
        read: @escaping @Sendable (PostgresRow) throws -> Row, onDelivered: @escaping @Sendable (Int) -> Void,
        afterDrain: @escaping @Sendable () async -> Void = {}, drainsOnShutdown: Bool = false
    ) {
        self.outbox = outbox
        self.loop = loop
        self.producer = producer
        self.columns = columns
        self.read = read
        self.onDelivered = onDelivered
        self.afterDrain = afterDrain
        self.drainsOnShutdown = drainsOnShutdown
    }

    public func run() async throws {
        try await loop.run(batch: publishBatch, afterDrain: afterDrain)
        if drainsOnShutdown { await loop.drain(batch: publishBatch) }
        await producer.shutdown()
    }

    /// Publishes until the outbox is drained, claiming each next batch while the current one
    /// is published (`LeasedOutbox.publishBatches`).
    /// - Returns: how many rows the last batch claimed (short of the batch size: drained).
    /// - Throws: `OutboxUndelivered` when Kafka did not acknowledge some rows; they stay in the
    ///   outbox and the loop tries again.
    public func publishBatch() async throws -> Int {
        let read = self.read
        let batch = try await outbox.publishBatches(returning: columns) { postgresRow in
            let row = try read(postgresRow)
            let message = KafkaProducer.TracedMessage(row.message, parent: .continuing(row.trace), spanName: "relay publish")
            return (row.order, row.id, message)
        } publish: { messages in
            await producer.send(messages)
        }
        onDelivered(batch.delivered)
        if batch.failed > 0 {
            throw OutboxUndelivered(table: outbox.table, failed: batch.failed, first: batch.firstFailure ?? "")
        }
        return batch.lastClaimed
    }
}

/// Kafka did not acknowledge some of a drain's rows; they stay in the outbox and are retried.
public struct OutboxUndelivered: Error, CustomStringConvertible, Sendable {
    public let table: String
    public let failed: Int
    /// The first failure, described.
    public let first: String

    public var description: String { "\(failed) row(s) of \(table) were not acknowledged by Kafka: \(first)" }
}
