import Foundation
import Hummingbird
import RescindObservability
import RescindProtocol
import RescindServiceSupport

/// Per-request state: the authenticated device (set by `BearerAuthenticator`), the body
/// limit, which the revocation upload route raises, and the connection's peer address (what
/// per-address limits count, unless it is a trusted proxy).
struct GrantRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    var identity: AuthenticatedDevice?
    var bodyLimit: Int
    let peerAddress: String?

    init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.identity = nil
        self.bodyLimit = GrantServiceConfiguration.HTTP.defaultMaxBodyBytes
        self.peerAddress = source.channel.remoteAddress?.ipAddress
    }

    var maxUploadSize: Int { bodyLimit }

    var requestDecoder: JSONRequestDecoder { JSONRequestDecoder() }
    var responseEncoder: JSONResponseEncoder { JSONResponseEncoder() }

    /// This context with `identity` set and the log naming the caller.
    func authenticated(as identity: AuthenticatedDevice) -> GrantRequestContext {
        var context = self
        context.identity = identity
        context.logger[metadataKey: LogKey.userID] = "\(identity.userID)"
        context.logger[metadataKey: LogKey.deviceID] = "\(identity.deviceID)"
        return context
    }

    /// The caller, or 401.
    func requireIdentity() throws -> AuthenticatedDevice {
        guard let identity else { throw APIError.unauthenticated }
        return identity
    }
}

/// Who is calling: the device that answered a challenge, and its user.
struct AuthenticatedDevice: Sendable {
    let userID: UUID
    let deviceID: UUID
}
