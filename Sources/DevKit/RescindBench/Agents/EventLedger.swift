import Foundation
import Logging
import RescindKafka
import RescindProtocol

/// Reads the stack's topics from the beginning (every partition, no consumer group) and
/// keeps, per revocation, when each device command was published, each device ack, and the
/// audit service's completion notice. Message timestamps are the producers' create times.
final class EventLedger: Sendable {
    struct Ack: Sendable {
        let ack: DeviceAck
        /// When the agent's producer published it (Kafka create time).
        let publishedAt: Date
    }

    struct Completion: Sendable {
        let publishedAt: Date
        let commitToLastAckMs: Int?
    }

    private struct State {
        var commands: [UUID: [UUID: Date]] = [:]
        var acks: [UUID: [UUID: Ack]] = [:]
        var completions: [UUID: Completion] = [:]
    }

    private let state = Locked(State())
    private let consumer: KafkaConsumer
    private let reader: Task<Void, Never>

    init(stack: BenchStack, fetchWaitMilliseconds: Int, logger: Logger) throws {
        let topics = [Topic.deviceCommands, .deviceAcks, .auditNotifications].map(stack.topic)
        consumer = try KafkaConsumer(
            configuration: KafkaConsumerConfiguration(
                bootstrapServers: stack.bootstrapServers, clientID: "rescind-bench-ledger",
                additionalProperties: ["fetch.wait.max.ms": "\(fetchWaitMilliseconds)"]),
            subscription: .partitions(
                topics.flatMap { topic in
                    (0..<BenchStack.partitions).map { KafkaPartitionAssignment(topic: topic, partition: $0, start: .beginning) }
                }),
            logger: logger)
        let consumer = self.consumer
        let state = self.state
        let prefix = stack.topicPrefix
        reader = Task {
            do {
                for try await message in consumer.messages {
                    Self.record(message, topicPrefix: prefix, into: state)
                }
            } catch {
                logger.error("the bench's topic reader stopped", metadata: ["error": "\(error)"])
            }
        }
    }

    private static func record(_ message: KafkaMessage, topicPrefix: String, into state: Locked<State>) {
        guard let value = message.value else { return }
        let published = message.timestamp ?? Date()
        switch message.topic.dropFirst(topicPrefix.count) {
        case Topic.deviceCommands.rawValue:
            guard let command = try? SignedMessage<DeviceCommand>.decode(value, schema: DeviceCommand.schema).payload else { return }
            state.withLock { $0.commands[command.eventID, default: [:]][command.deviceID] = published }
        case Topic.deviceAcks.rawValue:
            // Receipts (delivered, not now) are on the way to the answer: only answers are timed.
            guard let ack = try? SignedMessage<DeviceAck>.decode(value, schema: DeviceAck.schema).payload, ack.outcome.isFinal
            else { return }
            state.withLock { $0.acks[ack.eventID, default: [:]][ack.deviceID] = Ack(ack: ack, publishedAt: published) }
        case Topic.auditNotifications.rawValue:
            guard let notice = try? SignedMessage<AuditNotification>.decode(value, schema: AuditNotification.schema).payload,
                notice.kind == .revocationCompleted, let eventID = notice.eventID
            else { return }
            state.withLock { $0.completions[eventID] = Completion(publishedAt: published, commitToLastAckMs: notice.commitToLastAckMs) }
        default:
            break
        }
    }

    func commands(of eventID: UUID) -> [UUID: Date] { state.withLock { $0.commands[eventID] ?? [:] } }
    func acks(of eventID: UUID) -> [UUID: Ack] { state.withLock { $0.acks[eventID] ?? [:] } }
    func completion(of eventID: UUID) -> Completion? { state.withLock { $0.completions[eventID] } }
    var ackCount: Int { state.withLock { $0.acks.values.reduce(0) { $0 + $1.count } } }

    /// Waits until `count` devices acked `eventID`.
    func waitForAcks(_ eventID: UUID, count: Int, timeout: Duration) async -> [UUID: Ack] {
        _ = await Timing.wait(timeout: timeout) { self.acks(of: eventID).count >= count }
        return acks(of: eventID)
    }

    func stop() async {
        reader.cancel()
        await consumer.close()
    }
}
