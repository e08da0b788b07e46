import Hummingbird
import RescindProtocol

/// Every failure a client sees: a status, a stable code and a message for people.
///
/// Messages never carry stored values, key material or SQL; they say what was
/// wrong with the request.
struct APIError: Error, HTTPResponseError, Sendable {
    let status: HTTPResponse.Status
    let code: String
    let message: String

    init(_ status: HTTPResponse.Status, _ code: String, _ message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        let body = try CanonicalJSON.encode(APIErrorBody(code: code, message: message))
        return Response(
            status: status,
            headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}

extension APIError {
    static func badRequest(_ message: String) -> APIError { APIError(.badRequest, "bad_request", message) }
    static let unauthenticated = APIError(.unauthorized, "unauthenticated", "a valid bearer token is required")
    static func forbidden(_ message: String) -> APIError { APIError(.forbidden, "forbidden", message) }
    static let accessRevoked = APIError(.forbidden, "access_revoked", "your access to this family member was revoked")
    static func notFound(_ what: String) -> APIError { APIError(.notFound, "not_found", "\(what) not found") }
    static func conflict(_ code: String, _ message: String) -> APIError { APIError(.conflict, code, message) }
    static func versionConflict(current: Int) -> APIError {
        APIError(.conflict, "version_conflict", "the family member is at FMK version \(current); refresh and retry")
    }
    static func unprocessable(_ code: String, _ message: String) -> APIError {
        APIError(.unprocessableContent, code, message)
    }
    static func payloadTooLarge(limit: Int) -> APIError {
        APIError(.contentTooLarge, "payload_too_large", "request bodies are limited to \(limit) bytes")
    }
    static let unavailable = APIError(.serviceUnavailable, "unavailable", "the service is not ready")
}
