import CRdKafka
import Foundation

/// An `rd_kafka_headers_t` being built for one outgoing message. Destroyed in `deinit`
/// unless librdkafka took ownership of it (`relinquish()` after a successful produce).
final class RDKafkaHeaders {
    private var pointer: OpaquePointer?

    /// `nil` when there are no headers: librdkafka then sends none.
    init?(_ headers: [KafkaHeader]) {
        guard !headers.isEmpty else { return nil }
        let list = rd_kafka_headers_new(headers.count)
        for header in headers {
            if let value = header.value {
                value.withUnsafeBytes { bytes in
                    // rd_kafka_header_add copies name and value.
                    _ = rd_kafka_header_add(list, header.key, -1, bytes.baseAddress, bytes.count)
                }
            } else {
                _ = rd_kafka_header_add(list, header.key, -1, nil, 0)
            }
        }
        pointer = list
    }

    deinit {
        if let pointer { rd_kafka_headers_destroy(pointer) }
    }

    var unsafePointer: OpaquePointer? { pointer }

    /// Call after librdkafka accepted the message: it now owns and frees the list.
    func relinquish() {
        pointer = nil
    }

    /// Copies every header of a received message (repeated keys and null values kept, in order).
    static func copy(from message: UnsafePointer<rd_kafka_message_t>) -> [KafkaHeader] {
        var list: OpaquePointer?
        guard rd_kafka_message_headers(message, &list) == RD_KAFKA_RESP_ERR_NO_ERROR, let list else {
            return []
        }
        var headers: [KafkaHeader] = []
        var index = 0
        var name: UnsafePointer<CChar>?
        var value: UnsafeRawPointer?
        var size = 0
        while rd_kafka_header_get_all(list, index, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR {
            if let name {
                headers.append(KafkaHeader(key: String(cString: name), value: value.map { Data(bytes: $0, count: size) }))
            }
            index += 1
        }
        return headers
    }
}
