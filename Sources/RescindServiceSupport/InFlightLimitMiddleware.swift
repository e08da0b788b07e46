import Hummingbird
import Synchronization

/// Load shedding: at most `limit` requests are handled at once; one more is answered at once
/// with 503 `overloaded` and `Retry-After: 1` instead of queueing behind the others (which
/// would only make every caller wait, honest or not). A request counts from its head until
/// its handler returned (a body still being received counts: a slow sender holds its place).
public struct InFlightLimitMiddleware<Context: RequestContext>: RouterMiddleware {
    final class Counter: Sendable {
        let value = Mutex(0)
    }

    public let limit: Int
    /// Paths never counted nor shed (liveness, readiness, metrics: an overloaded service must
    /// still say so to its orchestrator and its dashboards).
    public let exempt: Set<String>
    /// Which requests this bound counts (the others pass uncounted): a second, smaller bound
    /// on one kind of request (the grant service's anonymous ones) beside the bound on all.
    private let counts: @Sendable (Request, Context) -> Bool
    private let counter = Counter()
    private let changed: @Sendable (Int) -> Void
    private let shed: @Sendable () -> Void

    /// - Parameters:
    ///   - counts: which requests this bound counts and sheds (default: all).
    ///   - changed: told the number in flight after every change (a gauge).
    ///   - shed: told every refusal (a counter).
    public init(
        limit: Int, exempt: Set<String> = [], counts: @escaping @Sendable (Request, Context) -> Bool = { _, _ in true },
        changed: @escaping @Sendable (Int) -> Void = { _ in }, shed: @escaping @Sendable () -> Void = {}
    ) {
        self.limit = limit
        self.exempt = exempt
        self.counts = counts
        self.changed = changed
        self.shed = shed
    }

    public static var overloaded: APIError {
        APIError(.serviceUnavailable, "overloaded", "the service is handling its maximum of requests; retry later", retryAfter: 1)
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if exempt.contains(request.uri.path) || !counts(request, context) { return try await next(request, context) }
        let admitted = counter.value.withLock { count -> Int? in
            guard count < limit else { return nil }
            count += 1
            return count
        }
        guard let admitted else {
            shed()
            throw Self.overloaded
        }
        changed(admitted)
        defer { changed(counter.value.withLock { count in count -= 1; return count }) }
        return try await next(request, context)
    }
}
