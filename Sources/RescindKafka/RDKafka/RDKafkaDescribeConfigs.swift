import CRdKafka

extension RDKafkaHandle {
    /// Sends DescribeConfigs for these topics and waits for the result. Blocks: call it on
    /// a `BlockingExecutor`.
    /// - Returns: per topic, every configuration entry the broker reported with a value.
    /// - Throws: `KafkaError` `.admin` when the request fails or the broker refuses a topic.
    func describeTopicConfigs(_ names: [String], timeout: Duration) throws -> [String: [String: String]] {
        guard !names.isEmpty else { return [:] }
        var resources: [OpaquePointer?] = names.map { rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, $0) }
        defer { rd_kafka_ConfigResource_destroy_array(&resources, resources.count) }

        let options = withPointer { rd_kafka_AdminOptions_new($0, RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS) }
        defer { rd_kafka_AdminOptions_destroy(options) }
        var errorText = [CChar](repeating: 0, count: 512)
        _ = rd_kafka_AdminOptions_set_request_timeout(options, timeout.clampedMilliseconds, &errorText, errorText.count)

        let results = RDKafkaQueue.temporary(for: self)
        withPointer { client in
            results.withPointer { queue in
                resources.withUnsafeMutableBufferPointer { buffer in
                    rd_kafka_DescribeConfigs(client, buffer.baseAddress, buffer.count, options, queue)
                }
            }
        }
        let outcome = results.poll(timeoutMilliseconds: (timeout + .seconds(5)).clampedMilliseconds) { event in
            Result { try Self.parseDescribeConfigs(event.pointer) }
        }
        guard let outcome else {
            throw KafkaError(code: .admin, rdKafka: RDKafkaCode(RD_KAFKA_RESP_ERR__TIMED_OUT), detail: "no DescribeConfigs result")
        }
        return try outcome.get()
    }

    private static func parseDescribeConfigs(_ event: OpaquePointer) throws -> [String: [String: String]] {
        let error = rd_kafka_event_error(event)
        guard error == RD_KAFKA_RESP_ERR_NO_ERROR else {
            throw KafkaError(code: .admin, rdKafka: RDKafkaCode(error), detail: rd_kafka_event_error_string(event).map { String(cString: $0) })
        }
        guard let result = rd_kafka_event_DescribeConfigs_result(event) else {
            throw KafkaError(code: .admin, detail: "unexpected event instead of a DescribeConfigs result")
        }
        var count = 0
        guard let resources = rd_kafka_DescribeConfigs_result_resources(result, &count) else { return [:] }
        var described: [String: [String: String]] = [:]
        for index in 0..<count {
            guard let resource = resources[index] else { continue }
            let name = String(cString: rd_kafka_ConfigResource_name(resource))
            let resourceError = rd_kafka_ConfigResource_error(resource)
            guard resourceError == RD_KAFKA_RESP_ERR_NO_ERROR else {
                let detail = rd_kafka_ConfigResource_error_string(resource).map { String(cString: $0) } ?? ""
                throw KafkaError(code: .admin, rdKafka: RDKafkaCode(resourceError), detail: "describing topic '\(name)' failed: \(detail)")
            }
            var entryCount = 0
            var entries: [String: String] = [:]
            if let configs = rd_kafka_ConfigResource_configs(resource, &entryCount) {
                for entryIndex in 0..<entryCount {
                    guard let entry = configs[entryIndex], let value = rd_kafka_ConfigEntry_value(entry) else { continue }
                    entries[String(cString: rd_kafka_ConfigEntry_name(entry))] = String(cString: value)
                }
            }
            described[name] = entries
        }
        return described
    }
}
