import Foundation
import Logging
import RescindKafka
import RescindObservability
import RescindTracing
import ServiceLifecycle
import Tracing

/// Publishes owed acks from the outbox to `device_acks` (keyed by device id) and marks each
/// sent only once the broker acknowledged it; what is not acknowledged is sent again,
/// after a restart if need be. Consumers deduplicate by `ack_id`.
struct AckPublisherService: Service {
    let engine: AgentEngine

    func run() async throws {
        let configuration = engine.configuration
        var kafka = KafkaProducerConfiguration(
            bootstrapServers: configuration.kafka.bootstrapServers, clientID: "rescind-agent-\(engine.deviceID.text)")
        kafka.messageTimeout = .seconds(30)
        // Each pass queues every owed message and then waits for the reports: no linger.
        kafka.linger = .zero
        kafka.additionalProperties = configuration.kafka.producerProperties
        let producer = try KafkaProducer(configuration: kafka, logger: engine.logger)
        do {
            try await publishUntilShutdown(producer)
        } catch {
            await producer.shutdown(timeout: .seconds(1))
            throw error
        }
        // What is still owed goes out after the restart.
        await producer.shutdown(timeout: .seconds(5))
    }

    private func publishUntilShutdown(_ producer: KafkaProducer) async throws {
        let engine = self.engine
        let configuration = engine.configuration
        try await runUntilShutdown {
            var backoff = Backoff(first: configuration.retryInterval, maximum: configuration.selfHealInterval)
            while !Task.isCancelled {
                let pass = try await Self.publishOwed(producer, engine: engine)
                if pass.delivered {
                    backoff.reset()
                    // A held receipt is due at the latest when its hold ends.
                    try await engine.acksOwed.wait(upTo: min(.seconds(1), pass.heldFor ?? .seconds(1)))
                } else {
                    try await Task.sleep(for: backoff.next())
                }
            }
        }
    }

    /// Sends every owed ack and receipt, in the order they were recorded, except the `delivered`
    /// receipts of commands still pending, held for `receiptHold` so that they go in one batch
    /// with their acks (`AgentStore.sendableMessages`). `delivered` false when some could not be
    /// delivered; `heldFor`: when the first held receipt is due.
    private static func publishOwed(_ producer: KafkaProducer, engine: AgentEngine) async throws -> (delivered: Bool, heldFor: Duration?) {
        guard engine.faults.publishAcks else { return (true, nil) }
        let (owed, heldFor) = try await engine.store.sendableMessages(holdingReceipts: engine.configuration.receiptHold)
        let owedAcks = owed.count(where: { !$0.isReceipt })
        engine.metrics.acksOwed(owedAcks)
        guard !owed.isEmpty else { return (true, heldFor) }
        let key = Data(engine.deviceID.text.utf8)
        for phases in engine.rotationLog.handedOff(owed.map(\.ackID)) { engine.metrics.rotated(phases) }
        // An ack or receipt of a traced command goes out under a producer span of its trace.
        let results = await producer.send(
            owed.map { ack in
                KafkaProducer.TracedMessage(
                    KafkaProducerMessage(topic: engine.configuration.acksTopic, key: key, value: ack.message),
                    parent: .continuing(ack.trace),
                    spanName: ack.isReceipt ? "receipt published" : "ack published")
            })
        let delivered = zip(owed, results).compactMap { ack, result -> AgentStore.OwedAck? in
            if case .success = result { return ack }
            return nil
        }
        let deliveredAcks = delivered.count(where: { !$0.isReceipt })
        if deliveredAcks > 0 { engine.faults.atStep(.ackDelivered) }
        try await engine.store.markSent(delivered.map(\.ackID))
        engine.metrics.acksPublished(deliveredAcks)
        engine.metrics.receiptsPublished(delivered.count - deliveredAcks)
        engine.metrics.acksOwed(owedAcks - deliveredAcks)
        if deliveredAcks > 0 {
            engine.logger.info("acks published", metadata: [LogKey.acks: "\(deliveredAcks)"])
        }
        if delivered.count > deliveredAcks {
            engine.logger.info("receipts published", metadata: [LogKey.acks: "\(delivered.count - deliveredAcks)"])
        }
        if delivered.count < owed.count {
            engine.logger.warning("acks not acknowledged by the broker; will retry", metadata: [LogKey.acks: "\(owed.count - delivered.count)"])
            return (false, heldFor)
        }
        return (true, heldFor)
    }
}
