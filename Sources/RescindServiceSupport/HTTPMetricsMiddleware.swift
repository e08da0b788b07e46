import Dispatch
import Hummingbird

/// Counts and times every request into `ServiceMetrics`: the one way both services record their
/// HTTP traffic.
///
/// A request is timed until its handler returns the response head (Hummingbird's own
/// middleware waits for the body to be written): a long-lived event stream counts as answered
/// once it starts, not when its reader leaves. A thrown error counts with its HTTP status (500
/// for anything that is not an `HTTPResponseError`), under the route `NotFound` when no route matched.
public struct HTTPMetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    private let metrics: ServiceMetrics

    public init(_ metrics: ServiceMetrics) {
        self.metrics = metrics
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = DispatchTime.now().uptimeNanoseconds
        let method = request.method.description
        let active = metrics.active(method: method)
        active.increment()
        defer { active.decrement() }
        do {
            let response = try await next(request, context)
            metrics.answered(
                route: context.endpointPath ?? "Unknown", method: method, status: response.status.code,
                nanoseconds: DispatchTime.now().uptimeNanoseconds - start)
            return response
        } catch {
            let status = (error as? any HTTPResponseError)?.status.code ?? 500
            let route = context.endpointPath ?? "NotFound"
            metrics.answered(route: route, method: method, status: status, nanoseconds: DispatchTime.now().uptimeNanoseconds - start)
            metrics.failed(route: route, method: method, status: status)
            throw error
        }
    }
}
