import Hummingbird
import RescindServiceSupport

/// The one place where a broken business rule gets its HTTP status: ill-formed → 400,
/// refused → 422, not allowed → 403, not found → 404, conflict → 409, unauthenticated → 401, expired → 410, in the
/// services' JSON error shape.
extension RuleViolation {
    var status: HTTPResponse.Status {
        switch kind {
        case .malformed: .badRequest
        case .refused: .unprocessableContent
        case .notAllowed: .forbidden
        case .notFound: .notFound
        case .conflict: .conflict
        case .unauthenticated: .unauthorized
        case .expired: .gone
        }
    }

    var apiError: APIError { APIError(status, code, message) }
}

/// Turns a `RuleViolation` thrown by a rule or a store into its `APIError`; installed right inside
/// `ErrorMiddleware`, so every route answers violations in the same shape.
struct RuleViolationMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let violation as RuleViolation {
            throw violation.apiError
        }
    }
}
