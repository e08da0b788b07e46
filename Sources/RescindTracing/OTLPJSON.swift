import Foundation
import Tracing

/// OTLP's JSON encoding of spans (`ExportTraceServiceRequest`, as `POST /v1/traces` takes it):
/// ids in lower-case hex, times as decimal strings of Unix nanoseconds, 64-bit integers as
/// strings, enums as their numbers.
enum OTLPJSON {
    static func request(_ spans: [FinishedSpan], serviceName: String, instanceID: String) throws -> Data {
        let request = ExportRequest(resourceSpans: [
            ResourceSpans(
                resource: Resource(attributes: [
                    KeyValue(key: "service.name", value: .string(serviceName)),
                    KeyValue(key: "service.instance.id", value: .string(instanceID)),
                ]),
                scopeSpans: [ScopeSpans(scope: Scope(name: "rescind"), spans: spans.map(OTLPSpan.init))])
        ])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(request)
    }

    struct ExportRequest: Encodable { var resourceSpans: [ResourceSpans] }
    struct ResourceSpans: Encodable { var resource: Resource, scopeSpans: [ScopeSpans] }
    struct Resource: Encodable { var attributes: [KeyValue] }
    struct ScopeSpans: Encodable { var scope: Scope, spans: [OTLPSpan] }
    struct Scope: Encodable { var name: String }

    struct OTLPSpan: Encodable {
        var traceId: String
        var spanId: String
        var parentSpanId: String?
        var name: String
        var kind: Int
        var startTimeUnixNano: String
        var endTimeUnixNano: String
        var attributes: [KeyValue]
        var events: [Event]
        var links: [Link]
        var status: Status

        init(_ span: FinishedSpan) {
            traceId = TraceContext.hex(span.traceID)
            spanId = TraceContext.hex(span.spanID)
            parentSpanId = span.parentSpanID.map(TraceContext.hex)
            name = span.name
            kind = switch span.kind {
            case .internal: 1
            case .server: 2
            case .client: 3
            case .producer: 4
            case .consumer: 5
            }
            startTimeUnixNano = String(span.startNanoseconds)
            endTimeUnixNano = String(span.endNanoseconds)
            attributes = KeyValue.list(span.attributes)
            events = span.events.map {
                Event(timeUnixNano: String($0.nanosecondsSinceEpoch), name: $0.name, attributes: KeyValue.list($0.attributes))
            }
            links = span.links.map { Link(traceId: TraceContext.hex($0.traceID), spanId: TraceContext.hex($0.spanID)) }
            status = switch span.status?.code {
            case nil: Status(code: 0, message: nil)
            case .ok: Status(code: 1, message: nil)
            case .error: Status(code: 2, message: span.status?.message)
            }
        }
    }
    struct Event: Encodable { var timeUnixNano: String, name: String, attributes: [KeyValue] }
    struct Link: Encodable { var traceId: String, spanId: String }
    struct Status: Encodable { var code: Int, message: String? }

    struct KeyValue: Encodable {
        var key: String
        var value: AnyValue

        static func list(_ attributes: SpanAttributes) -> [KeyValue] {
            var list: [KeyValue] = []
            attributes.forEach { key, value in list.append(KeyValue(key: key, value: AnyValue(value))) }
            return list.sorted { $0.key < $1.key }
        }
    }

    indirect enum AnyValue: Encodable {
        case string(String)
        case int(Int64)
        case double(Double)
        case bool(Bool)
        case array([AnyValue])

        init(_ attribute: SpanAttribute) {
            self = switch attribute {
            case .int32(let value): .int(Int64(value))
            case .int64(let value): .int(value)
            case .int32Array(let values): .array(values.map { .int(Int64($0)) })
            case .int64Array(let values): .array(values.map { .int($0) })
            case .double(let value): .double(value)
            case .doubleArray(let values): .array(values.map { .double($0) })
            case .bool(let value): .bool(value)
            case .boolArray(let values): .array(values.map { .bool($0) })
            case .string(let value): .string(value)
            case .stringArray(let values): .array(values.map { .string($0) })
            case .stringConvertible(let value): .string(value.description)
            case .stringConvertibleArray(let values): .array(values.map { .string($0.description) })
            default: .string(String(describing: attribute))
            }
        }

        enum Key: String, CodingKey { case stringValue, intValue, doubleValue, boolValue, arrayValue }
        struct Values: Encodable { var values: [AnyValue] }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            switch self {
            case .string(let value): try container.encode(value, forKey: .stringValue)
            case .int(let value): try container.encode(String(value), forKey: .intValue)
            case .double(let value): try container.encode(value, forKey: .doubleValue)
            case .bool(let value): try container.encode(value, forKey: .boolValue)
            case .array(let values): try container.encode(Values(values: values), forKey: .arrayValue)
            }
        }
    }
}
