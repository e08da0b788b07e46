import CRdKafka

extension KafkaError {
    /// Wraps a librdkafka response code; `detail` defaults to librdkafka's generic text for it.
    init(code: Code, rdKafka error: RDKafkaCode, detail: String? = nil) {
        self.init(
            code: code,
            rdKafkaCode: error.rawValue,
            rdKafkaName: String(cString: rd_kafka_err2name(error.cValue)),
            detail: detail ?? error.text
        )
    }

    /// Wraps and destroys an `rd_kafka_error_t`.
    init(code: Code, consuming error: OpaquePointer) {
        defer { rd_kafka_error_destroy(error) }
        self.init(
            code: code, rdKafka: RDKafkaCode(rd_kafka_error_code(error)),
            detail: String(cString: rd_kafka_error_string(error))
        )
    }
}
