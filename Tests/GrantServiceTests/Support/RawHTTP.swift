import Foundation
import RescindProtocol
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Plain HTTP to the service, for what a well-behaved client never sends:
/// malformed bodies, missing or forged tokens, oversized payloads.
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

    private static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 30
        return URLSession(configuration: configuration)
    }()

    /// - Parameter authorization: the whole `Authorization` header; `token` is shorthand for `Bearer <token>`.
    func send(
        _ method: String, _ path: String, query: String? = nil, token: String? = nil, authorization: String? = nil,
        body: Data? = nil, contentType: String = "application/json", accept: String? = nil
    ) async throws -> Answer {
        var components = URLComponents(url: baseURL.appendingPathComponent(path), resolvingAgainstBaseURL: false)!
        components.percentEncodedQuery = query
        var request = URLRequest(url: components.url!)
        request.httpMethod = method
        if let body {
            request.httpBody = body
            request.setValue(contentType, forHTTPHeaderField: "Content-Type")
        }
        if let accept { request.setValue(accept, forHTTPHeaderField: "Accept") }
        if let header = authorization ?? token.map({ "Bearer \($0)" }) {
            request.setValue(header, forHTTPHeaderField: "Authorization")
        }
        let (data, response) = try await Self.session.data(for: request)
        let http = response as? HTTPURLResponse
        return Answer(
            status: http?.statusCode ?? 0, body: data, contentType: http?.value(forHTTPHeaderField: "Content-Type"))
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
