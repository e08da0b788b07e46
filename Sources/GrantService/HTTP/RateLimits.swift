import Hummingbird
import RescindServiceSupport

/// The budgets of `GrantServiceConfiguration.Limits`, one limiter each, and which request
/// spends which. Per-address budgets are spent before anything else is done for the request
/// (before its body is read, its token looked up or the database asked), so a flood from one
/// address costs the service a map lookup per request; per-device budgets once the bearer
/// token named the device.
struct RateLimits: Sendable {
    /// A budget a request spends, named as in `rescind_requests_rate_limited_total{limit}`.
    enum Budget: String, CaseIterable, Sendable {
        case registrationsPerAddress = "registrations_per_address"
        case registrations
        case challengesPerAddress = "challenges_per_address"
        case challenges
        case tokensPerAddress = "tokens_per_address"
        case tokens
        case enrolmentsPerAddress = "enrolments_per_address"
        case identityOperationsPerDevice = "identity_operations_per_device"
        case identityOperationsPerUser = "identity_operations_per_user"
        case requestsPerDevice = "requests_per_device"

        var refusal: String {
            switch self {
            case .registrationsPerAddress: "too many registrations from this address"
            case .registrations: "too many registrations on this service"
            case .challengesPerAddress: "too many authentication challenges from this address"
            case .challenges: "too many authentication challenges on this service (a device with a live token renews it without this budget)"
            case .tokensPerAddress: "too many token requests from this address"
            case .tokens: "too many token requests on this service (a device with a live token renews it without this budget)"
            case .enrolmentsPerAddress: "too many enrolments and recovery orders from this address"
            case .identityOperationsPerDevice: "too many identity operations by this device"
            case .identityOperationsPerUser: "too many identity operations by this user's devices"
            case .requestsPerDevice: "too many requests by this device"
            }
        }
    }

    static let limitNames = Budget.allCases.map(\.rawValue)

    let limiters: [Budget: RateLimiter]
    let trustedProxies: Set<String>
    let metrics: GrantMetrics

    init(_ limits: GrantServiceConfiguration.Limits, metrics: GrantMetrics) {
        let rates: [Budget: RateLimiter.Rate] = [
            .registrationsPerAddress: limits.registrationsPerAddress, .registrations: limits.registrations,
            .challengesPerAddress: limits.challengesPerAddress, .challenges: limits.challenges,
            .tokensPerAddress: limits.tokensPerAddress, .tokens: limits.tokens,
            .enrolmentsPerAddress: limits.enrolmentsPerAddress,
            .identityOperationsPerDevice: limits.identityOperationsPerDevice,
            .identityOperationsPerUser: limits.identityOperationsPerUser, .requestsPerDevice: limits.requestsPerDevice,
        ]
        limiters = rates.mapValues { RateLimiter(rate: $0) }
        trustedProxies = limits.trustedProxies
        self.metrics = metrics
    }

    /// Spends one request of `budget` for `key`.
    /// - Throws: 429 `rate_limited` with `Retry-After` when it is spent.
    func spend(_ budget: Budget, key: String) throws {
        guard case .refused(let retryAfter) = limiters[budget]!.acquire(key) else { return }
        metrics.rateLimited[budget.rawValue]?.increment()
        throw APIError.tooMany("rate_limited", "\(budget.refusal); retry after \(retryAfter) s", retryAfter: retryAfter)
    }

    /// The per-address budgets of an unauthenticated or enrolling request (`nil`: none).
    static func addressBudget(method: HTTPRequest.Method, path: String) -> Budget? {
        guard method == .post else { return nil }
        switch path {
        case "/v1/users": return .registrationsPerAddress
        case "/v1/auth/challenge": return .challengesPerAddress
        case "/v1/auth/token": return .tokensPerAddress
        case "/v1/enrolment-challenges", "/v1/devices", "/v1/recovery/challenges", "/v1/recovery/actions": return .enrolmentsPerAddress
        default: return nil
        }
    }

    /// The budget of every address together that a per-address budget's requests spend too.
    static func sharedBudget(of budget: Budget) -> Budget? {
        switch budget {
        case .registrationsPerAddress: .registrations
        case .challengesPerAddress: .challenges
        case .tokensPerAddress: .tokens
        default: nil
        }
    }

    /// The per-device budget of an authenticated request: identity operations have their own,
    /// smaller one; every other request shares the device's fair share.
    static func deviceBudget(method: HTTPRequest.Method, path: String) -> Budget {
        let components = path.split(separator: "/")
        let resource = components.count > 1 ? String(components[1]) : ""
        switch (method, resource) {
        case (.post, "enrolment-challenges"), (.post, "devices"), (.delete, "devices"), (.post, "identity-rotations"),
            (.post, "invitations"), (.post, "governance"), (.post, "recovery-key"), (.put, "key-backup"):
            return .identityOperationsPerDevice
        default:
            return .requestsPerDevice
        }
    }
}

/// Spends the per-address budget of the anonymous `/v1` requests that have one
/// (`RateLimits.addressBudget`), and for a registration, a challenge or a token the budget of
/// every address together too; after `RenewalAuthenticator`, whose renewals spend their
/// device's budget instead.
struct AddressRateLimitMiddleware: RouterMiddleware {
    typealias Context = GrantRequestContext
    let limits: RateLimits

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if context.identity == nil, let budget = RateLimits.addressBudget(method: request.method, path: request.uri.path) {
            let key = ClientAddress.key(
                peer: context.peerAddress, forwardedFor: request.headers.last { $0.name.canonicalName == "x-forwarded-for" }?.value, trustedProxies: limits.trustedProxies)
            try limits.spend(budget, key: key)
            if let shared = RateLimits.sharedBudget(of: budget) { try limits.spend(shared, key: "all") }
        }
        return try await next(request, context)
    }
}

/// Spends the authenticated device's budget (`RateLimits.deviceBudget`), and for an identity
/// operation its user's too (a user's devices together, so enrolling more devices buys no more);
/// after `BearerAuthenticator`.
struct DeviceRateLimitMiddleware: RouterMiddleware {
    typealias Context = GrantRequestContext
    let limits: RateLimits

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let caller = try context.requireIdentity()
        let budget = RateLimits.deviceBudget(method: request.method, path: request.uri.path)
        try limits.spend(budget, key: caller.deviceID.uuidString)
        if budget == .identityOperationsPerDevice { try limits.spend(.identityOperationsPerUser, key: caller.userID.uuidString) }
        return try await next(request, context)
    }
}
