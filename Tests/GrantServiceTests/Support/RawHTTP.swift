import Foundation
import RescindProtocol
import RescindTestSupport
import Testing

/// Raw requests to the service (over HTTPS with the suite's CA, as the harness serves), for what
/// a well-behaved client never sends: malformed bodies, missing or forged tokens, oversized payloads.
struct RawHTTP: Sendable {
    let baseURL: URL

    struct Answer: Sendable {
        let status: Int
        let body: Data
        let contentType: String?

        /// The `error.code` of an error body, if it has the design's error shape.
        var errorCode: String? { (try? CanonicalJSON.decode(APIErrorBody.self, from: body))?.error.code }
        var text: String { String(decoding: body, as: UTF8.self) }

        func decode<T: Decodable>(_ type: T.Type) throws -> T { try CanonicalJSON.decode(type, from: body) }
    }

    /// - Parameter authorization: the whole `Authorization` header; `token` is shorthand for `Bearer <token>`.
    func send(
        _ method: String, _ path: String, query: String? = nil, token: String? = nil, authorization: String? = nil,
        body: Data? = nil, contentType: String = "application/json", accept: String? = nil
    ) async throws -> Answer {
        var components = URLComponents(url: baseURL.appendingPathComponent(path), resolvingAgainstBaseURL: false)!
        components.percentEncodedQuery = query
        var headers: [(String, String)] = []
        if body != nil { headers.append(("Content-Type", contentType)) }
        if let accept { headers.append(("Accept", accept)) }
        if let header = authorization ?? token.map({ "Bearer \($0)" }) { headers.append(("Authorization", header)) }
        let answer = try await TestHTTP.send(method, components.url!, headers: headers, body: body)
        return Answer(status: answer.status, body: answer.body, contentType: answer.contentType)
    }

    func send(_ method: String, _ path: String, token: String? = nil, json: some Encodable) async throws -> Answer {
        try await send(method, path, token: token, body: try CanonicalJSON.encode(json))
    }

    func send(_ method: String, _ path: String, token: String? = nil, text: String) async throws -> Answer {
        try await send(method, path, token: token, body: Data(text.utf8))
    }
}

/// Checks an answer is the design's JSON error with this status (and code).
func expectError(
    _ answer: RawHTTP.Answer, _ status: Int, _ code: String? = nil, sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(answer.status == status, "body: \(answer.text)", sourceLocation: sourceLocation)
    #expect(answer.contentType == "application/json", sourceLocation: sourceLocation)
    #expect(answer.errorCode != nil, "not the error shape: \(answer.text)", sourceLocation: sourceLocation)
    if let code { #expect(answer.errorCode == code, sourceLocation: sourceLocation) }
}
