import Hummingbird
import Logging
import RescindObservability

/// Gives every failure the JSON error shape: `APIError`s pass through, Hummingbird's
/// errors (unknown route, bad parameter) keep their status, and anything unexpected
/// becomes a 500 that reveals nothing and is logged.
public struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    public init() {}

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            throw error
        } catch let error as HTTPError {
            throw APIError(error.status, Self.code(for: error.status), error.body ?? error.status.reasonPhrase)
        } catch is CancellationError {
            throw APIError(.serviceUnavailable, "cancelled", "the request was cancelled")
        } catch {
            context.logger.error(
                "request failed", metadata: [LogKey.errorType: "\(type(of: error))", LogKey.error: "\(error)"])
            throw APIError(.internalServerError, "internal", "internal error; see the service log")
        }
    }

    static func code(for status: HTTPResponse.Status) -> String {
        switch status {
        case .notFound: "not_found"
        case .methodNotAllowed: "method_not_allowed"
        case .badRequest: "bad_request"
        case .contentTooLarge: "payload_too_large"
        case .unauthorized: "unauthenticated"
        default: "http_\(status.code)"
        }
    }
}
