import Foundation
import Hummingbird
import RescindProtocol
import RescindServiceSupport

/// Decodes request bodies with Rescind's JSON conventions and maps every
/// decoding failure to a 400 (or 413) with a message that names the problem.
struct JSONRequestDecoder: RequestDecoder {
    func decode<T: Decodable>(_ type: T.Type, from request: Request, context: some RequestContext) async throws -> T {
        try Self.decode(T.self, from: try await request.collectBody(context: context))
    }

    static func decode<T: Decodable>(_ type: T.Type, from buffer: ByteBuffer) throws -> T {
        do {
            return try CanonicalJSON.decoder().decode(T.self, from: Data(buffer: buffer))
        } catch let error as DecodingError {
            throw APIError.badRequest("malformed JSON body: \(error.shortDescription)")
        }
    }
}

extension Request {
    /// As `decode(as:context:)` for an optional body: nil when the request has none.
    func decodeIfPresent<T: Decodable>(as type: T.Type, context: some RequestContext) async throws -> T? {
        let buffer = try await collectBody(context: context)
        return buffer.readableBytes > 0 ? try JSONRequestDecoder.decode(T.self, from: buffer) : nil
    }

    /// The whole body; 413 beyond the route's limit (`context.maxUploadSize`).
    func collectBody(context: some RequestContext) async throws -> ByteBuffer {
        do {
            return try await body.collect(upTo: context.maxUploadSize)
        } catch {
            throw APIError.payloadTooLarge(limit: context.maxUploadSize)
        }
    }
}

/// Encodes responses with Rescind's JSON conventions.
struct JSONResponseEncoder: ResponseEncoder {
    func encode(_ value: some Encodable, from request: Request, context: some RequestContext) throws -> Response {
        let data = try CanonicalJSON.encode(value)
        return Response(
            status: .ok,
            headers: [.contentType: "application/json", .contentLength: String(data.count)],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}

extension DecodingError {
    /// Where and what, without echoing the value that failed; fields named as the wire spells them.
    var shortDescription: String {
        func path(_ context: Context) -> String {
            let keys = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? WireKeys.snake($0.stringValue) }
            return keys.isEmpty ? "body" : keys.joined(separator: ".")
        }
        switch self {
        case .keyNotFound(let key, let context): return "missing field \(path(context)).\(WireKeys.snake(key.stringValue))"
        case .typeMismatch(_, let context): return "wrong type at \(path(context))"
        case .valueNotFound(_, let context): return "missing value at \(path(context))"
        case .dataCorrupted(let context): return "invalid value at \(path(context))"
        @unknown default: return "invalid body"
        }
    }
}
