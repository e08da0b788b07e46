import Hummingbird
import RescindProtocol

/// Every failure a client of a Rescind service sees: a status, a stable code and a
/// message for people, as `{"error": {"code", "message"}}` (`APIErrorBody`).
///
/// Messages never carry stored values, key material or SQL; they say what was wrong
/// with the request. Services add their own cases in extensions.
public struct APIError: Error, HTTPResponseError, Sendable {
    public let status: HTTPResponse.Status
    public let code: String
    public let message: String
    /// Seconds after which the same request may succeed (`Retry-After`), for 429 and 503.
    public let retryAfter: Int?
    /// Further headers the answer carries (`Allow` with a 405).
    public let headers: HTTPFields

    public init(_ status: HTTPResponse.Status, _ code: String, _ message: String, retryAfter: Int? = nil, headers: HTTPFields = [:]) {
        self.status = status
        self.code = code
        self.message = message
        self.retryAfter = retryAfter
        self.headers = headers
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        let body = try CanonicalJSON.encode(APIErrorBody(code: code, message: message))
        var headers = self.headers
        headers[.contentType] = "application/json"
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}

extension APIError {
    public static func badRequest(_ message: String) -> APIError { APIError(.badRequest, "bad_request", message) }
    public static func forbidden(_ message: String) -> APIError { APIError(.forbidden, "forbidden", message) }
    public static func notFound(_ what: String) -> APIError { APIError(.notFound, "not_found", "\(what) not found") }
    public static func conflict(_ code: String, _ message: String) -> APIError { APIError(.conflict, code, message) }
    public static func unprocessable(_ code: String, _ message: String) -> APIError {
        APIError(.unprocessableContent, code, message)
    }
    public static func payloadTooLarge(limit: Int) -> APIError {
        APIError(.contentTooLarge, "payload_too_large", "request bodies are limited to \(limit) bytes")
    }
    /// 429: too many of something open at once for one device or user; `retryAfter` seconds
    /// until the oldest expires.
    public static func tooMany(_ code: String, _ message: String, retryAfter: Int) -> APIError {
        APIError(.tooManyRequests, code, message, retryAfter: retryAfter)
    }
    public static let unavailable = APIError(.serviceUnavailable, "unavailable", "the service is not ready")
    /// The database could not be reached or did not answer in time; nothing is known to have changed
    /// unless the request is repeated and finds it done. Retry later.
    public static let databaseUnavailable = APIError(
        .serviceUnavailable, "database_unavailable", "the database did not answer in time; retry later")
}
