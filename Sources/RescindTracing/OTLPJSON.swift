import Foundation
import Tracing

/// OTLP's JSON encoding of spans (`ExportTraceServiceRequest`, as `POST /v1/traces` takes it):
/// ids in lower-case hex, times as decimal strings of Unix nanoseconds, 64-bit integers as
/// strings, enums as their numbers.
enum OTLPJSON {
    /// Written by hand rather than through `JSONEncoder`, which cost about 24 µs a span here (the
    /// bench's tracing section measures the export per span): every traced process pays it.
    static func request(_ spans: [FinishedSpan], serviceName: String, instanceID: String) throws -> Data {
        var out = Writer()
        out.raw(#"{"resourceSpans":[{"resource":{"attributes":["#)
        out.keyValue("service.instance.id", .string(instanceID))
        out.raw(",")
        out.keyValue("service.name", .string(serviceName))
        out.raw(#"]},"scopeSpans":[{"scope":{"name":"rescind"},"spans":["#)
        for (index, span) in spans.enumerated() {
            if index > 0 { out.raw(",") }
            out.span(span)
        }
        out.raw("]}]}]}")
        return Data(out.bytes)
    }

    /// A JSON text being written, UTF-8.
    struct Writer {
        var bytes: [UInt8] = []

        init() { bytes.reserveCapacity(4096) }

        mutating func raw(_ text: String) { bytes.append(contentsOf: text.utf8) }

        /// A JSON string: `"` and `\` escaped, control characters as `\u00XX`, the rest as is.
        mutating func string(_ text: String) {
            bytes.append(UInt8(ascii: "\""))
            for byte in text.utf8 {
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                    bytes.append(UInt8(ascii: "\\"))
                    bytes.append(byte)
                case 0..<0x20:
                    let hex = Array("0123456789abcdef".utf8)
                    bytes.append(contentsOf: Array("\\u00".utf8))
                    bytes.append(hex[Int(byte >> 4)])
                    bytes.append(hex[Int(byte & 0xF)])
                default:
                    bytes.append(byte)
                }
            }
            bytes.append(UInt8(ascii: "\""))
        }

        mutating func field(_ name: String, _ value: String, first: Bool = false) {
            if !first { raw(",") }
            string(name)
            raw(":")
            string(value)
        }

        mutating func span(_ span: FinishedSpan) {
            raw("{")
            var attributes: [(String, AnyValue)] = []
            span.attributes.forEach { key, value in attributes.append((key, AnyValue(value))) }
            raw(#""attributes":["#)
            list(attributes)
            raw("]")
            field("endTimeUnixNano", String(span.endNanoseconds))
            raw(#","events":["#)
            for (index, event) in span.events.enumerated() {
                if index > 0 { raw(",") }
                var eventAttributes: [(String, AnyValue)] = []
                event.attributes.forEach { key, value in eventAttributes.append((key, AnyValue(value))) }
                raw(#"{"attributes":["#)
                list(eventAttributes)
                raw("]")
                field("name", event.name)
                field("timeUnixNano", String(event.nanosecondsSinceEpoch))
                raw("}")
            }
            raw("]")
            let kind = switch span.kind {
            case .internal: 1
            case .server: 2
            case .client: 3
            case .producer: 4
            case .consumer: 5
            }
            raw(#","kind":\#(kind),"links":["#)
            for (index, link) in span.links.enumerated() {
                if index > 0 { raw(",") }
                raw("{")
                field("spanId", TraceContext.hex(link.spanID), first: true)
                field("traceId", TraceContext.hex(link.traceID))
                raw("}")
            }
            raw("]")
            field("name", span.name)
            if let parent = span.parentSpanID { field("parentSpanId", TraceContext.hex(parent)) }
            field("spanId", TraceContext.hex(span.spanID))
            field("startTimeUnixNano", String(span.startNanoseconds))
            switch span.status?.code {
            case nil: raw(#","status":{"code":0}"#)
            case .ok: raw(#","status":{"code":1}"#)
            case .error:
                raw(#","status":{"code":2"#)
                if let message = span.status?.message { field("message", message) }
                raw("}")
            }
            field("traceId", TraceContext.hex(span.traceID))
            raw("}")
        }

        /// Attributes as OTLP `KeyValue`s, sorted by key.
        mutating func list(_ attributes: [(String, AnyValue)]) {
            for (index, (key, value)) in attributes.sorted(by: { $0.0 < $1.0 }).enumerated() {
                if index > 0 { raw(",") }
                keyValue(key, value)
            }
        }

        mutating func keyValue(_ key: String, _ value: AnyValue) {
            raw(#"{"key":"#)
            string(key)
            raw(#","value":"#)
            anyValue(value)
            raw("}")
        }

        /// OTLP's `AnyValue`: 64-bit integers as strings, non-finite doubles as proto3 JSON's strings.
        mutating func anyValue(_ value: AnyValue) {
            switch value {
            case .string(let text):
                raw(#"{"stringValue":"#)
                string(text)
                raw("}")
            case .int(let number):
                raw(#"{"intValue":"\#(number)"}"#)
            case .double(let number):
                if number.isFinite {
                    raw(#"{"doubleValue":\#(number)}"#)
                } else {
                    raw(#"{"doubleValue":"#)
                    string(number.isNaN ? "NaN" : number < 0 ? "-Infinity" : "Infinity")
                    raw("}")
                }
            case .bool(let flag):
                raw(flag ? #"{"boolValue":true}"# : #"{"boolValue":false}"#)
            case .array(let values):
                raw(#"{"arrayValue":{"values":["#)
                for (index, element) in values.enumerated() {
                    if index > 0 { raw(",") }
                    anyValue(element)
                }
                raw("]}}")
            }
        }
    }

    indirect enum AnyValue {
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
    }
}
