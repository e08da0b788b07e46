import Foundation
import Tracing

/// Trace context in Kafka message headers, the way HTTP carries it (`traceparent`,
/// `tracestate`; UTF-8 values): whatever instrument the process bootstrapped reads and writes
/// them. With none (tracing off) nothing is read and nothing is added.
extension KafkaMessage {
    /// `base` with the trace context the producer put in this message's headers; a message
    /// with none, or a malformed one, leaves `base` as it is.
    public func serviceContext(_ base: ServiceContext = .topLevel) -> ServiceContext {
        var context = base
        InstrumentationSystem.instrument.extract(headers, into: &context, using: KafkaHeadersExtractor())
        return context
    }
}

extension KafkaProducerMessage {
    /// Adds the trace context of `context` to the headers (nothing when it carries none).
    public mutating func inject(_ context: ServiceContext) {
        InstrumentationSystem.instrument.inject(context, into: &headers, using: KafkaHeadersInjector())
    }
}

struct KafkaHeadersExtractor: Extractor {
    /// The last header of that name: a repeated key is read as HTTP reads a repeated field
    /// it cannot merge, and a null or non-UTF-8 value is none.
    func extract(key: String, from headers: [KafkaHeader]) -> String? {
        guard let value = headers.last(where: { $0.key == key })?.value else { return nil }
        return String(data: value, encoding: .utf8)
    }
}

struct KafkaHeadersInjector: Injector {
    func inject(_ value: String, forKey key: String, into headers: inout [KafkaHeader]) {
        headers.removeAll { $0.key == key }
        headers.append(KafkaHeader(key: key, value: Data(value.utf8)))
    }
}
