import CRdKafka
import Foundation

extension KafkaMessage {
    /// Copies a message librdkafka lends; the copy owns all its bytes.
    init(copying message: UnsafePointer<rd_kafka_message_t>) {
        let raw = message.pointee
        var timestampType = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE
        let milliseconds = rd_kafka_message_timestamp(message, &timestampType)
        self.init(
            topic: raw.rkt.map { String(cString: rd_kafka_topic_name($0)) } ?? "",
            partition: raw.partition,
            offset: raw.offset,
            key: raw.key.map { Data(bytes: $0, count: raw.key_len) },
            value: raw.payload.map { Data(bytes: $0, count: raw.len) },
            headers: RDKafkaHeaders.copy(from: message),
            timestamp: timestampType == RD_KAFKA_TIMESTAMP_NOT_AVAILABLE
                ? nil : Date(timeIntervalSince1970: Double(milliseconds) / 1_000)
        )
    }
}
