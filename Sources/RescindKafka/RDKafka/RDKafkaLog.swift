import CRdKafka
import Logging
import RescindObservability

/// Forwards librdkafka's log and error events to a swift-log `Logger`.
enum RDKafkaLog {
    /// Handles `RD_KAFKA_EVENT_LOG`; syslog levels map to swift-log levels.
    static func forwardLog(_ event: RDKafkaEvent, to logger: Logger) {
        var facility: UnsafePointer<CChar>?
        var text: UnsafePointer<CChar>?
        var level: Int32 = 0
        guard rd_kafka_event_log(event.pointer, &facility, &text, &level) == 0, let text else { return }
        let swiftLevel: Logger.Level
        switch level {
        case ...2: swiftLevel = .critical
        case 3: swiftLevel = .error
        case 4: swiftLevel = .warning
        case 5: swiftLevel = .notice
        case 6: swiftLevel = .info
        default: swiftLevel = .debug
        }
        logger.log(
            level: swiftLevel, "\(String(cString: text))",
            metadata: [LogKey.facility: "\(facility.map { String(cString: $0) } ?? "")"]
        )
    }

    /// Handles `RD_KAFKA_EVENT_ERROR`. Returns the error when librdkafka marks it fatal
    /// (the client can no longer make progress); non-fatal ones are only logged, as
    /// librdkafka recovers from them by itself (broker reconnects and the like).
    static func handleError(_ event: RDKafkaEvent, logger: Logger, code: KafkaError.Code) -> KafkaError? {
        let error = event.code
        let detail = rd_kafka_event_error_string(event.pointer).map { String(cString: $0) }
        let wrapped = KafkaError(code: code, rdKafka: error, detail: detail)
        if rd_kafka_event_error_is_fatal(event.pointer) != 0 {
            logger.error("fatal librdkafka error", metadata: [LogKey.error: "\(wrapped)"])
            return wrapped
        }
        logger.warning("librdkafka error", metadata: [LogKey.error: "\(wrapped)"])
        return nil
    }
}
