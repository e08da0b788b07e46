import Foundation
import Logging
import RescindKafka
import RescindObservability
import ServiceLifecycle

/// Reads `device_commands` in this device's own consumer group (`rescind-agent-<device id>`),
/// so every device sees every command and picks its own. A message's offset is committed
/// only after the inbox holds its command: a crash before that redelivers it, and the
/// inbox deduplicates by command id. Failures to take a message in are classified
/// (`CommandFailure`): retried when transient, quarantined otherwise.
struct CommandConsumerService: Service {
    let engine: AgentEngine

    func run() async throws {
        let configuration = engine.configuration
        var kafka = KafkaConsumerConfiguration(
            bootstrapServers: configuration.kafka.bootstrapServers, clientID: "rescind-agent-\(engine.deviceID.text)",
            groupID: "rescind-agent-\(engine.deviceID.text)", autoOffsetReset: .earliest)
        kafka.sessionTimeout = configuration.kafka.sessionTimeout
        kafka.heartbeatInterval = min(.seconds(3), configuration.kafka.sessionTimeout / 10)
        kafka.additionalProperties = configuration.kafka.consumerProperties
        let consumer = try KafkaConsumer(
            configuration: kafka, subscription: .group(topics: [configuration.commandsTopic]), logger: engine.logger)
        engine.logger.info("consuming device commands", metadata: [LogKey.topic: "\(configuration.commandsTopic)"])
        // With a metrics file, the lag in messages and the brokers' reachability are asked as
        // often as the file is written, beside the consumer (never in the way of a message). The
        // probe stops before the consumer closes: a probe cut short by the agent's own shutdown
        // says nothing of the brokers, so the last answer stands (the file is written last at exit).
        let lagProbe = configuration.metricsFile == nil ? nil : Task { [engine, interval = configuration.metricsInterval] in
            while !Task.isCancelled {
                let lag = try? await consumer.lag()
                if Task.isCancelled { break }
                engine.metrics.commandLag(lag?.map { ($0.partition, $0.messages) })
                try? await Task.sleep(for: interval)
            }
        }
        defer { lagProbe?.cancel() }
        var paces: [Int32: CommitPace] = [:]
        do {
            try await withGracefulShutdownHandler {
                for try await message in consumer.messages {
                    try await handle(message, consumer: consumer, pace: &paces[message.partition, default: CommitPace()])
                }
            } onGracefulShutdown: {
                lagProbe?.cancel()
                Task { await consumer.close() }
            }
        } catch {
            lagProbe?.cancel()
            try? await engine.writeRejectionCounters()
            await consumer.close()
            throw error
        }
        lagProbe?.cancel()
        try? await engine.writeRejectionCounters()
        await consumer.close()
    }

    /// Per partition, offsets of messages that stored nothing (ignored, rejected) are committed at
    /// most every `CommitPace.messages` messages or `CommitPace.interval`: a synchronous commit per message
    /// made every junk message keyed to this device cost a broker round trip. A restart reads the
    /// uncommitted ones again and refuses them again; the next stored command's commit covers them.
    struct CommitPace {
        static let messages = 500
        static let interval = Duration.seconds(1)
        var skipped = 0
        var lastCommit = ContinuousClock.now

        mutating func shouldCommitSkipped() -> Bool {
            skipped += 1
            return skipped >= Self.messages || lastCommit.duration(to: .now) >= Self.interval
        }

        mutating func committed() { (skipped, lastCommit) = (0, .now) }
    }

    private func handle(_ message: KafkaMessage, consumer: KafkaConsumer, pace: inout CommitPace) async throws {
        let receipt = try await receiveClassifying(message)
        var commandID: UUID?
        var sealedSeq: Int64?
        switch receipt {
        case .stored(let id):
            commandID = id
            engine.faults.atStep(.stored)
        case .sealed(let seq): sealedSeq = seq
        case .noted: break
        case .ignored, .rejected:
            guard pace.shouldCommitSkipped() else { return }
        }
        // The rejections counted so far are written before their offsets are committed.
        try await engine.writeRejectionCounters()
        try await engine.faults.beforeOffsetCommit(
            .init(partition: message.partition, offset: message.offset, commandID: commandID))
        do {
            try await consumer.commit(message)
            pace.committed()
        } catch {
            // Not fatal: the message comes again and the inbox recognises it.
            engine.logger.warning("offset commit failed", metadata: [LogKey.error: "\(error)"])
            return
        }
        if let commandID { try await engine.store.markOffsetCommitted(commandID) }
        if let sealedSeq { try await engine.store.markSealedOffsetCommitted(sealedSeq) }
    }

    /// `engine.receive`, retrying transient failures with backoff; a failure that depends on
    /// the message, or one that outlasts `CommandFailure.retryBudget`, quarantines the message
    /// (counted, logged) so that its offset is committed and the partition moves on.
    private func receiveClassifying(_ message: KafkaMessage) async throws -> AgentEngine.Receipt {
        var backoff = Backoff(first: .milliseconds(100), maximum: .seconds(5))
        var attempts = 0
        while true {
            do {
                return try await engine.receive(message)
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                attempts += 1
                let failure = CommandFailure.classify(error)
                let metadata: Logger.Metadata = [
                    LogKey.partition: "\(message.partition)", LogKey.offset: "\(message.offset)",
                    LogKey.error: "\(error)", LogKey.attempt: "\(attempts)",
                ]
                if failure == .content || attempts >= CommandFailure.retryBudget {
                    engine.metrics.quarantined(failure)
                    try? await engine.store.increment("rejected_\(CommandValidation.Rejection.unprocessable.rawValue)")
                    engine.logger.error("quarantined a device command that cannot be taken in", metadata: metadata)
                    return .rejected(.unprocessable)
                }
                engine.metrics.retried()
                engine.logger.warning("taking in a device command failed; retrying", metadata: metadata)
            }
            try await Task.sleep(for: backoff.next())
        }
    }
}
