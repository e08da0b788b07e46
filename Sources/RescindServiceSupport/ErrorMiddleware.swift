import Hummingbird
import Logging
import RescindObservability
import RescindPostgres

/// Gives every failure the JSON error shape: `APIError`s pass through, Hummingbird's
/// errors (unknown route, bad parameter) keep their status, a database that cannot be reached
/// or did not answer within `RESCIND_DATABASE_TIMEOUT_SECONDS` is a 503 `database_unavailable`
/// (the client may retry), and anything unexpected becomes a 500 that reveals nothing and is logged.
public struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    public init() {}

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            throw error
        } catch let error as HTTPError {
            throw APIError(error.status, Self.code(for: error.status), error.body ?? error.status.reasonPhrase)
        } catch let error as PostgresError where error.isUnavailable {
            context.logger.warning(
                "request failed: database unavailable", metadata: [LogKey.errorType: "\(error.code)", LogKey.error: "\(error)"])
            throw APIError.databaseUnavailable
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
