import Hummingbird

/// Gives every failure the JSON error shape: `APIError`s pass through, Hummingbird's
/// errors keep their status, anything else becomes a logged 500 that reveals nothing.
/// (The grant service has the same middleware: a candidate for a shared HTTP module.)
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            throw error
        } catch let error as HTTPError {
            let code = error.status == .notFound ? "not_found" : "http_\(error.status.code)"
            throw APIError(error.status, code, error.body ?? error.status.reasonPhrase)
        } catch is CancellationError {
            throw APIError(.serviceUnavailable, "cancelled", "the request was cancelled")
        } catch {
            context.logger.error("request failed", metadata: ["error.type": "\(type(of: error))", "error": "\(error)"])
            throw APIError(.internalServerError, "internal", "internal error; see the service log")
        }
    }
}
