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
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer "),
            let token = Optional(header.dropFirst("Bearer ".count)), !token.isEmpty, token.count <= 128
        else { throw APIError.unauthenticated }
        guard let identity = try await identities.authenticate(tokenHash: Self.hash(token: token)) else {
            throw APIError.unauthenticated
        }
        var context = context
        context.identity = identity
        context.logger[metadataKey: LogKey.userID] = "\(identity.userID)"
        context.logger[metadataKey: LogKey.deviceID] = "\(identity.deviceID)"
        return try await next(request, context)
    }

    static func hash(token: some StringProtocol) -> Data {
        Data(SHA256.hash(Array(token.utf8)))
    }
}
