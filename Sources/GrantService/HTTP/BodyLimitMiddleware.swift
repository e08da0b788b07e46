import Hummingbird

/// Sets the body limit for the routes below it.
struct BodyLimitMiddleware: RouterMiddleware {
    typealias Context = GrantRequestContext
    let bytes: Int

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.bodyLimit = bytes
        return try await next(request, context)
    }
}
