import CRdKafka

extension KafkaAdmin {
    /// Runs on the admin's blocking queue: sends CreateTopics and waits for its result event.
    static func createTopicsBlocking(
        _ topics: [KafkaTopic], timeout: Duration, handle: RDKafkaHandle
    ) throws -> [String: KafkaTopicCreationOutcome] {
        guard !topics.isEmpty else { return [:] }
        var newTopics = try topics.map(makeNewTopic)
        defer { rd_kafka_NewTopic_destroy_array(&newTopics, newTopics.count) }

        let options = handle.withPointer { rd_kafka_AdminOptions_new($0, RD_KAFKA_ADMIN_OP_CREATETOPICS) }
        defer { rd_kafka_AdminOptions_destroy(options) }
        var errorText = [CChar](repeating: 0, count: 512)
        _ = rd_kafka_AdminOptions_set_request_timeout(options, timeout.clampedMilliseconds, &errorText, errorText.count)
        _ = rd_kafka_AdminOptions_set_operation_timeout(options, timeout.clampedMilliseconds, &errorText, errorText.count)

        let results = RDKafkaQueue.temporary(for: handle)
        handle.withPointer { client in
            results.withPointer { queue in
                newTopics.withUnsafeMutableBufferPointer { buffer in
                    rd_kafka_CreateTopics(client, buffer.baseAddress, buffer.count, options, queue)
                }
            }
        }
        // librdkafka answers by itself once the request timeout passes; the margin only
        // guards against never hearing back at all.
        let waitLimit = (timeout + .seconds(5)).clampedMilliseconds
        let outcome = results.poll(timeoutMilliseconds: waitLimit) { event in
            Result { try parse(event) }
        }
        guard let outcome else {
            throw KafkaError(code: .admin, rdKafka: .timedOut, detail: "no CreateTopics result")
        }
        return try outcome.get()
    }

    private static func makeNewTopic(_ spec: KafkaTopic) throws -> OpaquePointer? {
        var errorText = [CChar](repeating: 0, count: 512)
        guard let topic = rd_kafka_NewTopic_new(
            spec.name, spec.partitions, Int32(spec.replicationFactor), &errorText, errorText.count
        ) else {
            throw KafkaError(code: .admin, detail: "invalid topic spec '\(spec.name)': \(String(cStringBuffer: errorText))")
        }
        for (key, value) in spec.configuration.sorted(by: { $0.key < $1.key }) {
            let error = rd_kafka_NewTopic_set_config(topic, key, value)
            guard error == RD_KAFKA_RESP_ERR_NO_ERROR else {
                rd_kafka_NewTopic_destroy(topic)
                throw KafkaError(code: .admin, rdKafka: RDKafkaCode(error), detail: "invalid config '\(key)' for topic '\(spec.name)'")
            }
        }
        return topic
    }

    private static func parse(_ event: RDKafkaEvent) throws -> [String: KafkaTopicCreationOutcome] {
        let error = event.code
        guard error == .noError else {
            throw KafkaError(code: .admin, rdKafka: error, detail: rd_kafka_event_error_string(event.pointer).map { String(cString: $0) })
        }
        guard let result = rd_kafka_event_CreateTopics_result(event.pointer) else {
            throw KafkaError(code: .admin, detail: "unexpected event instead of a CreateTopics result")
        }
        var count = 0
        guard let topics = rd_kafka_CreateTopics_result_topics(result, &count) else { return [:] }
        var outcomes: [String: KafkaTopicCreationOutcome] = [:]
        for index in 0..<count {
            guard let topic = topics[index] else { continue }
            let name = String(cString: rd_kafka_topic_result_name(topic))
            let topicError = rd_kafka_topic_result_error(topic)
            switch topicError {
            case RD_KAFKA_RESP_ERR_NO_ERROR:
                outcomes[name] = .created
            case RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS:
                outcomes[name] = .alreadyExisted
            default:
                let detail = rd_kafka_topic_result_error_string(topic).map { String(cString: $0) } ?? ""
                throw KafkaError(code: .admin, rdKafka: RDKafkaCode(topicError), detail: "creating topic '\(name)' failed: \(detail)")
            }
        }
        return outcomes
    }
}
