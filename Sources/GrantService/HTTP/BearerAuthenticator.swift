import Foundation
import Hummingbird
import RescindCrypto
import RescindObservability
import RescindServiceSupport

/// Resolves `Authorization: Bearer <token>` to the device it was issued to.
/// Tokens are stored as SHA-256 hashes; an expired token or a retired device is a 401.
struct BearerAuthenticator: RouterMiddleware {
    typealias Context = GrantRequestContext
    let identities: IdentityStore

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let identity = try await Self.identity(of: request, in: identities) else { throw APIError.unauthenticated }
        return try await next(request, context.authenticated(as: identity))
    }

    /// The device a well-formed, live bearer token of `request` was issued to; `nil` when it
    /// carries none, a malformed one, or one that is expired or of a retired device.
    static func identity(of request: Request, in identities: IdentityStore) async throws -> AuthenticatedDevice? {
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer "),
            let token = Optional(header.dropFirst("Bearer ".count)), !token.isEmpty, token.count <= 128
        else { return nil }
        return try await identities.authenticate(tokenHash: hash(token: token))
    }

    static func hash(token: some StringProtocol) -> Data {
        Data(SHA256.hash(Array(token.utf8)))
    }
}

/// Token renewal in the device's own lane. A challenge or token request that carries a live
/// token renews it: it spends its device's fair share (`requests_per_device`), not its source
/// address's budget, and is not counted among the anonymous requests in flight, so a device
/// that keeps its token alive never queues behind, nor is refused with, an anonymous flood.
/// The renewal still answers a fresh challenge with the device key (a stolen token alone
/// cannot extend itself), and only for the device the token names (`IdentityController`).
/// A request whose token does not authenticate is handled as an anonymous one.
struct RenewalAuthenticator: RouterMiddleware {
    typealias Context = GrantRequestContext
    static let paths: Set<String> = ["/v1/auth/challenge", "/v1/auth/token"]
    let identities: IdentityStore
    let limits: RateLimits

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.method == .post, Self.paths.contains(request.uri.path), request.headers[.authorization] != nil,
            let identity = try await BearerAuthenticator.identity(of: request, in: identities)
        else { return try await next(request, context) }
        try limits.spend(.requestsPerDevice, key: identity.deviceID.uuidString)
        return try await next(request, context.authenticated(as: identity))
    }
}
