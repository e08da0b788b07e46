import Foundation
import Logging
import RescindCrypto
import RescindKafka
import RescindObservability
import RescindPostgres
import RescindProtocol
import RescindTracing
import Tracing

/// Turns one input message into stored facts and conclusions, in one transaction.
///
/// Input is never trusted: a message that is not a well-formed envelope signed by the
/// expected key, with every field within `MessageLimits`, is rejected (stored, counted,
/// reported), and the handler returns so that its offset is committed. When it throws,
/// the consumer classifies the error (`HandlingFailure`): retried when transient,
/// quarantined (`quarantine`) when it depends on the message. Every write is idempotent by event or ack id.
struct InboundMessageHandler: Sendable {
    let pool: PostgresConnectionPool
    let topics: TopicNames
    let grantServiceKey: Ed25519.PublicKey
    let auditLog: AuditLog
    let tracker: RevocationTracker
    let writer: ConclusionWriter
    let violationIntake: KeyChainViolationIntake
    let rejections: RejectionLog
    let metrics: AuditMetrics
    let logger: Logger

    /// Counts a message read (once, however often its handling is retried).
    func received(_ message: KafkaMessage) {
        guard let topic = topics.topic(named: message.topic) else { return }
        metrics.consumed(topic)
        if let timestamp = message.timestamp { metrics.lag(topic, seconds: Date().timeIntervalSince(timestamp)) }
    }

    /// Handles a message under a consumer span of the trace its headers carry (`ack recorded`,
    /// `revocation event recorded`, …); a message with none (or tracing off) untraced.
    func handle(_ message: KafkaMessage) async throws {
        let context = message.serviceContext()
        guard context.traceContext != nil else { return try await handleUntraced(message) }
        let name = switch topics.topic(named: message.topic) {
        case .deviceAcks: "ack recorded"
        case .revocationEvents: "revocation event recorded"
        case .accessEvents: "access event recorded"
        default: "message recorded"
        }
        try await InstrumentationSystem.tracer.withAnySpan(name, context: context, ofKind: .consumer) { span in
            span.attributes["messaging.system"] = "kafka"
            try await handleUntraced(message)
        }
    }

    private func handleUntraced(_ message: KafkaMessage) async throws {
        let position = MessagePosition(topic: message.topic, partition: message.partition, offset: message.offset)
        let topic = topics.topic(named: message.topic)
        let conclusions = try await pool.transaction { connection in
            var conclusions = Conclusions()
            do {
                switch topic {
                case .revocationEvents:
                    try await revocationEvent(message.value, at: position, on: connection, into: &conclusions)
                case .accessEvents where SignedEnvelope.claimedSchema(message.value) == GovernanceNotice.schema:
                    try await governanceNotice(message.value, on: connection, into: &conclusions)
                case .accessEvents:
                    try await accessEvent(message.value, on: connection, into: &conclusions)
                case .deviceAcks where SignedEnvelope.claimedSchema(message.value) == KeyChainViolation.schema:
                    try await keyChainViolation(message.value, at: position, on: connection, into: &conclusions)
                case .deviceAcks:
                    try await tracker.receive(message.value, at: position, on: connection, into: &conclusions)
                default:
                    throw Rejection("unknown_topic")
                }
            } catch let rejection as Rejection {
                // Every check that rejects runs before the first write of its message.
                try await rejections.record(
                    rejection, at: position, envelope: message.value, on: connection, into: &conclusions)
            }
            try await writer.write(conclusions, on: connection)
            return conclusions
        }
        record(conclusions)
    }

    /// Stores a message that cannot be handled (bounded bytes, escaped claimed signer) and
    /// reports it as `message_rejected`, so that its offset can be committed.
    func quarantine(_ message: KafkaMessage, reason: String) async throws {
        let position = MessagePosition(topic: message.topic, partition: message.partition, offset: message.offset)
        let claimed = message.value.flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
        let rejection = Rejection(reason, signer: claimed?["signer"] as? String)
        let conclusions = try await pool.transaction { connection in
            var conclusions = Conclusions()
            try await rejections.record(rejection, at: position, envelope: message.value, on: connection, into: &conclusions)
            try await writer.write(conclusions, on: connection)
            return conclusions
        }
        record(conclusions)
    }

    /// Whether the database answers a trivial query: tells a message that keeps failing
    /// from an outage.
    func databaseAnswers() async -> Bool {
        (try? await pool.withConnection { try await $0.query("SELECT 1") }) != nil
    }

    /// Metrics move (and rejections are logged) only once the transaction committed.
    func record(_ conclusions: Conclusions) {
        for (reason, position) in conclusions.rejections {
            metrics.rejected(reason: reason)
            logger.warning(
                "rejected message",
                metadata: [
                    LogKey.topic: "\(position.topic)", LogKey.partition: "\(position.partition)",
                    LogKey.offset: "\(position.offset)", LogKey.reason: "\(reason)",
                ])
        }
        for (reason, position, first) in conclusions.unstoredRejections {
            metrics.rejected(reason: reason)
            metrics.rejectionNotStored(reason: reason)
            // Once per hour, topic, partition and reason: a flood must not fill the log either.
            if first {
                logger.warning(
                    "rejections beyond this hour's stored rows are counted only",
                    metadata: [
                        LogKey.topic: "\(position.topic)", LogKey.partition: "\(position.partition)",
                        LogKey.reason: "\(reason)",
                    ])
            }
        }
        if conclusions.bodiesNotStored > 0 { metrics.rejectedBodiesNotStored.increment(by: Int64(conclusions.bodiesNotStored)) }
        for cause in conclusions.evictedHeldAcks { metrics.heldAckEvicted(cause: cause) }
        for notification in conclusions.notifications where notification.kind == .keyChainViolation {
            metrics.keyChainViolation(verification: notification.reporterVerification?.rawValue ?? "unknown")
        }
        for completion in conclusions.completions {
            metrics.commitToLastAck.record(.milliseconds(completion.commitToLastAckMs))
            Self.traceCompletion(completion)
        }
        if conclusions.auditEntries > 0 { metrics.auditEntries.increment(by: Int64(conclusions.auditEntries)) }
    }

    /// Closes a revocation's trace: a `revocation completed` span from its commit to its last
    /// ack, under the span of the message that completed it (none when that one was untraced).
    static func traceCompletion(_ completion: Conclusions.Completion) {
        guard ServiceContext.current?.traceContext != nil else { return }
        func instant(_ date: Date) -> DefaultTracerClock.Timestamp {
            DefaultTracerClock.Timestamp(nanosecondsSinceEpoch: UInt64(max(0, date.timeIntervalSince1970) * 1_000_000_000))
        }
        let span = InstrumentationSystem.tracer.startSpan(
            "revocation completed", context: ServiceContext.current ?? .topLevel, at: instant(completion.committedAt))
        span.attributes["rescind.devices"] = completion.devices
        span.attributes["rescind.commit_to_last_ack_ms"] = completion.commitToLastAckMs
        span.end(at: instant(completion.lastAck))
    }

    /// Decodes a grant-service envelope and checks its signature.
    func verifiedGrantMessage<Payload: Codable & Sendable>(
        _ bytes: Data?, schema: String, as type: Payload.Type
    ) throws -> SignedMessage<Payload> {
        guard let bytes else { throw Rejection(MessageError.malformed) }
        let message: SignedMessage<Payload>
        do {
            message = try SignedMessage<Payload>.decode(bytes, schema: schema)
        } catch let error as MessageError {
            throw Rejection(error)
        }
        do {
            try message.verify(key: grantServiceKey)
        } catch let error as MessageError {
            throw Rejection(error.code, signer: message.signer)
        }
        return message
    }
}
