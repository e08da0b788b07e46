import Hummingbird
import RescindProtocol

/// Every failure a client sees: a status, a stable code and a message for people,
/// in the JSON shape of every Rescind service (`APIErrorBody`).
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
            status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}

extension APIError {
    static func badRequest(_ message: String) -> APIError { APIError(.badRequest, "bad_request", message) }
    static let unauthenticated = APIError(
        .unauthorized, "unauthenticated", "a bearer token issued by the grant service is required")
    static let notOwner = APIError(.forbidden, "forbidden", "only the family member's owner may read its access log")
    static func notFound(_ what: String) -> APIError { APIError(.notFound, "not_found", "\(what) not found") }
    static let unavailable = APIError(.serviceUnavailable, "unavailable", "the service is not ready")
    static let authenticationUnavailable = APIError(
        .serviceUnavailable, "authentication_unavailable", "the grant service cannot confirm the caller right now")
}
