import Logging
import RescindObservability

extension KafkaConsumer {
    /// Handles messages one at a time and commits each one after `handler` returns.
    /// Returns when the consumer is closed (or the calling task is cancelled, which closes it).
    ///
    /// If `handler` throws, `run` rethrows at once without committing that message, so
    /// it is delivered again (to this group, after `close()` and a restart). A handler
    /// must therefore throw only for failures worth retrying, and deal with a malformed
    /// message itself (reject, report, return) so that it does not block its partition.
    ///
    /// A failed commit is logged, not thrown: the message was handled, and at worst it
    /// is handled once more by the partition's next owner.
    /// - Throws: the handler's error, or `KafkaError` `.consume` for a fatal consumer error.
    public func run(
        isolation: isolated (any Actor)? = #isolation,
        _ handler: (KafkaMessage) async throws -> Void
    ) async throws {
        for try await message in messages {
            try await handler(message)
            do {
                try await commit(message)
            } catch {
                logger.warning(
                    "commit failed; the message will be delivered again",
                    metadata: [
                        LogKey.topic: "\(message.topic)", LogKey.partition: "\(message.partition)",
                        LogKey.offset: "\(message.offset)", LogKey.error: "\(error)",
                    ]
                )
            }
        }
    }
}
