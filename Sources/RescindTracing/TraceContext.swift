import Tracing

/// A position in a trace, as W3C Trace Context carries it between processes: the trace's
/// 16-byte id, the 8-byte id of the span that is the parent of whatever continues it, the trace
/// flags, and the vendors' `tracestate`, passed on untouched.
///
/// Parsing is strict the way the recommendation asks: lower-case hex, the exact field widths,
/// neither id all zeros, version `ff` refused. A header that breaks any rule is as good as none:
/// the receiver starts a trace of its own, so a hostile header can neither fail a request nor
/// graft anything onto ours beyond a parent pointer.
public struct TraceContext: Sendable, Hashable {
    public var traceID: [UInt8]
    public var spanID: [UInt8]
    public var flags: UInt8
    public var traceState: String?

    /// Whether the caller recorded its part of the trace (flag bit 0).
    public var isSampled: Bool { flags & 1 == 1 }

    public init(traceID: [UInt8], spanID: [UInt8], flags: UInt8 = 1, traceState: String? = nil) {
        precondition(traceID.count == 16 && spanID.count == 8, "a trace id is 16 bytes and a span id 8")
        self.traceID = traceID
        self.spanID = spanID
        self.flags = flags
        self.traceState = traceState
    }

    /// Parses a `traceparent` header (`00-<32 hex>-<16 hex>-<2 hex>`); `nil` when it breaks a rule.
    /// A version above `00` is read as `00` is, ignoring whatever follows its four fields.
    public init?(traceparent: String, tracestate: String? = nil) {
        let bytes = Array(traceparent.utf8)
        guard bytes.count >= 55, bytes[2] == UInt8(ascii: "-"), bytes[35] == UInt8(ascii: "-"), bytes[52] == UInt8(ascii: "-"),
            let version = Self.hex(bytes[0..<2]).map({ $0[0] }), version != 0xff,
            version != 0 || bytes.count == 55, bytes.count == 55 || bytes[55] == UInt8(ascii: "-"),
            let traceID = Self.hex(bytes[3..<35]), traceID.contains(where: { $0 != 0 }),
            let spanID = Self.hex(bytes[36..<52]), spanID.contains(where: { $0 != 0 }),
            let flags = Self.hex(bytes[53..<55])?[0]
        else { return nil }
        self.init(traceID: traceID, spanID: spanID, flags: flags, traceState: tracestate.flatMap { $0.isEmpty ? nil : $0 })
    }

    /// The `traceparent` header naming this position (version `00`).
    public var traceparent: String { "00-\(Self.hex(traceID))-\(Self.hex(spanID))-\(Self.hex([flags]))" }

    /// `tracestate` as far as it may be stored and sent on (W3C: at most 512 characters of
    /// printable ASCII); a caller's longer or stranger value is dropped rather than refused, so
    /// that tracing never fails the work it watches.
    public var storableTraceState: String? {
        guard let traceState, traceState.utf8.count <= 512, traceState.utf8.allSatisfy({ (0x20...0x7e).contains($0) }) else {
            return nil
        }
        return traceState
    }

    public var traceIDHex: String { Self.hex(traceID) }
    public var spanIDHex: String { Self.hex(spanID) }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Lower-case hex only: the recommendation refuses upper case.
    static func hex(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        guard text.count % 2 == 0 else { return nil }
        func nibble(_ character: UInt8) -> UInt8? {
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
            default: nil
            }
        }
        var bytes = [UInt8]()
        bytes.reserveCapacity(text.count / 2)
        var index = text.startIndex
        while index < text.endIndex {
            guard let high = nibble(text[index]), let low = nibble(text[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    /// Fresh random ids, never all zeros.
    static func randomID(count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        while true {
            let bytes = (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
            if bytes.contains(where: { $0 != 0 }) { return bytes }
        }
    }
}

private enum TraceContextKey: ServiceContextKey {
    typealias Value = TraceContext
    static var nameOverride: String? { "rescind.trace-context" }
}

extension ServiceContext {
    /// The span that is current in this context (its own id as `spanID`), or the remote parent a
    /// propagated header named.
    public var traceContext: TraceContext? {
        get { self[TraceContextKey.self] }
        set { self[TraceContextKey.self] = newValue }
    }
}

extension ServiceContext {
    /// A top-level context whose work continues `trace` (a stored or received position); `nil`
    /// when there is none, and the work goes untraced.
    public static func continuing(_ trace: TraceContext?) -> ServiceContext? {
        guard let trace else { return nil }
        var context = ServiceContext.topLevel
        context.traceContext = trace
        return context
    }
}
