import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOFoundationCompat
import NIOSSL
import RescindCrypto
import RescindObservability
import RescindProtocol
import RescindServiceSupport
import RescindTracing

/// The two questions the audit service asks the grant service over HTTP: its
/// message-signing key (at start, unless pinned) and who a bearer token belongs to
/// (token introspection for the access-log API; the audit service has no users).
///
/// Over AsyncHTTPClient's shared pool with the configured TLS (the grant service's certificate
/// checked against `RESCIND_CA_FILE`); URLSession on Linux cannot be given a CA file.
struct GrantServiceLink: Sendable {
    let baseURL: URL
    private let tls: TLSConfiguration
    private let timeout: Duration

    init(baseURL: URL, tls: TLSConfiguration, timeout: Duration = .seconds(10)) {
        self.baseURL = baseURL
        self.tls = tls
        self.timeout = timeout
    }

    /// `GET /v1/service-key`.
    /// - Throws: `AuditServiceError.grantService` when unreachable or the answer is not a key.
    func serviceKey() async throws -> Ed25519.PublicKey {
        let (data, status) = try await get("v1/service-key", token: nil)
        guard status == 200, let body = try? CanonicalJSON.decode(ServiceKeyResponse.self, from: data),
            let key = try? Ed25519.PublicKey(rawRepresentation: [UInt8](body.signingPublicKey))
        else {
            throw AuditServiceError.grantService("GET /v1/service-key answered \(status) without a usable key")
        }
        return key
    }

    /// `GET /v1/me` with the caller's token.
    /// - Returns: the token's user id, or `nil` when the grant service refuses the token.
    /// - Throws: `AuditServiceError.grantService` when it cannot answer.
    func userID(forToken token: String) async throws -> UUID? {
        try await identity(forToken: token)?.userID
    }

    /// `GET /v1/me` with the caller's token: the user and the device the token was issued to.
    /// - Returns: `nil` when the grant service refuses the token.
    /// - Throws: `AuditServiceError.grantService` when it cannot answer.
    func identity(forToken token: String) async throws -> (userID: UUID, deviceID: UUID)? {
        let (data, status) = try await get("v1/me", token: token)
        switch status {
        case 200:
            guard let me = try? CanonicalJSON.decode(MeResponse.self, from: data) else {
                throw AuditServiceError.grantService("GET /v1/me answered an unexpected body")
            }
            return (me.user.userID, me.device.deviceID)
        case 401, 403: return nil
        default: throw AuditServiceError.grantService("GET /v1/me answered \(status)")
        }
    }

    /// The user and device a bearer token belongs to, as the HTTP routes need it (see `introspect`).
    func introspectDevice(_ token: String, logger: Logger) async throws -> (userID: UUID, deviceID: UUID)? {
        do {
            return try await identity(forToken: token)
        } catch {
            logger.warning("token introspection failed", metadata: [LogKey.error: "\(error)"])
            throw APIError.authenticationUnavailable
        }
    }

    /// The user a bearer token belongs to, as the HTTP routes need it: `nil` for a token the
    /// grant service refuses; any other failure is logged and becomes 503 `APIError.authenticationUnavailable`.
    func introspect(_ token: String, logger: Logger) async throws -> UUID? {
        do {
            return try await userID(forToken: token)
        } catch {
            logger.warning("token introspection failed", metadata: [LogKey.error: "\(error)"])
            throw APIError.authenticationUnavailable
        }
    }

    private func get(_ path: String, token: String?) async throws -> (Data, Int) {
        var request = HTTPClientRequest(url: baseURL.appendingPathComponent(path).absoluteString)
        request.method = .GET
        request.tlsConfiguration = tls
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        do {
            let response = try await HTTPClient.untraced.execute(request, timeout: .init(timeout))
            var body = try await response.body.collect(upTo: 1 << 20)
            return (body.readData(length: body.readableBytes) ?? Data(), Int(response.status.code))
        } catch {
            throw AuditServiceError.grantService("\(baseURL.host ?? "?") unreachable (\(type(of: error)))")
        }
    }
}
