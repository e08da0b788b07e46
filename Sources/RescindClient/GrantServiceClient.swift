import Foundation
import RescindCrypto
import RescindProtocol
import RescindTLS
import Synchronization

/// The grant service's HTTP API for devices, agents and the CLI.
///
/// Every client in a process shares one connection pool (`HTTPTransport`), so clients
/// are cheap to make and to drop. With device credentials it authenticates by
/// challenge–response on first use and again whenever its token expires.
public final class GrantServiceClient: Sendable {
    public let baseURL: URL
    let transport: HTTPTransport
    let credentials: DeviceCredentials?
    private let token = Mutex<(value: String, expiresAt: Date)?>(nil)

    /// A device that can sign challenges.
    public struct DeviceCredentials: Sendable {
        public let deviceID: UUID
        public let signingKey: Ed25519.PrivateKey

        public init(deviceID: UUID, signingKey: Ed25519.PrivateKey) {
            self.deviceID = deviceID
            self.signingKey = signingKey
        }
    }

    /// - Parameters:
    ///   - timeout: the whole of one request, answer included.
    ///   - tls: how the service is reached; the default refuses plain HTTP and trusts the
    ///     system's roots. A refused URL fails each request with code `plain_http_refused`.
    public convenience init(
        baseURL: URL, credentials: DeviceCredentials? = nil, timeout: Duration = .seconds(30), tls: ClientTLS = .strict
    ) {
        self.init(baseURL: baseURL, credentials: credentials, transport: HTTPTransport(timeout: timeout, tls: tls))
    }

    /// The TLS policy this client reaches its service with.
    public var tls: ClientTLS { transport.tls }

    private init(baseURL: URL, credentials: DeviceCredentials?, transport: HTTPTransport) {
        self.baseURL = baseURL
        self.credentials = credentials
        self.transport = transport
    }

    /// The same service, acting as another device: same timeout, its own token.
    public func authenticated(as credentials: DeviceCredentials) -> GrantServiceClient {
        GrantServiceClient(baseURL: baseURL, credentials: credentials, transport: transport)
    }

    // MARK: Transport

    /// Requests of every client in this process that were shed (503 `overloaded`) and asked
    /// again after `Retry-After` (the load bench reports them beside the refusals).
    public static let retriesAfterShedding = Atomic<Int>(0)
    /// The longest `Retry-After` a shed request waits for before it is asked again (seconds).
    static let longestSheddingWait = 5

    enum Method: String { case get = "GET", post = "POST", put = "PUT", delete = "DELETE" }

    /// Sends a request and decodes the answer; non-2xx answers throw `GrantServiceError`.
    func send<Response: Decodable>(
        _ method: Method, _ path: String, query: [URLQueryItem] = [], body: (some Encodable)? = nil as Empty?,
        authenticated: Bool = true, as type: Response.Type = Response.self
    ) async throws -> Response {
        let encoded = try body.map { try CanonicalJSON.encode($0) }
        let data = try await sendRaw(method, path, query: query, body: encoded, authenticated: authenticated).body
        return try decodeAnswer(of: path) { try CanonicalJSON.decode(Response.self, from: data) }
    }

    /// A 2xx answer whose body is not what the route promises is `invalid_response`.
    func decodeAnswer<T>(of path: String, _ decode: () throws -> T) throws -> T {
        do {
            return try decode()
        } catch {
            throw GrantServiceError(status: 200, code: "invalid_response", message: "unexpected response body for \(path)")
        }
    }

    /// As `send`, for answers without a body (204).
    func sendExpectingNoContent(_ method: Method, _ path: String, body: (some Encodable)? = nil as Empty?) async throws {
        let encoded = try body.map { try CanonicalJSON.encode($0) }
        _ = try await sendRaw(method, path, query: [], body: encoded, authenticated: true)
    }

    /// - Parameters:
    ///   - contentType: of `body`.
    ///   - accept: the media type asked for, when not JSON.
    func sendRaw(
        _ method: Method, _ path: String, query: [URLQueryItem], body: Data?, contentType: String = "application/json",
        accept: String? = nil, authenticated: Bool
    ) async throws -> HTTPTransport.Response {
        var retriedAuthentication = false
        var retriedShedding = false
        while true {
            var components = URLComponents(url: baseURL.appendingPathComponent(path), resolvingAgainstBaseURL: false)!
            if !query.isEmpty { components.queryItems = query }
            var headers: [(String, String)] = accept.map { [("Accept", $0)] } ?? []
            if authenticated {
                headers.append(("Authorization", "Bearer \(try await bearerToken())"))
            }
            let response = try await transport.send(
                method.rawValue, components.url!, headers: headers, body: body, contentType: contentType)
            let (data, status) = (response.body, response.status)
            if (200..<300).contains(status) { return response }
            // Shed (503 `overloaded`): the service did nothing; asked again once after its Retry-After.
            if status == 503, !retriedShedding, let wait = response.retryAfter,
                (try? CanonicalJSON.decode(APIErrorBody.self, from: data))?.error.code == "overloaded"
            {
                retriedShedding = true
                Self.retriesAfterShedding.add(1, ordering: .relaxed)
                try await Task.sleep(for: .seconds(min(max(wait, 0), Self.longestSheddingWait)))
                continue
            }
            if status == 401, authenticated, !retriedAuthentication, credentials != nil {
                token.withLock { $0 = nil }
                retriedAuthentication = true
                continue
            }
            throw GrantServiceError(status: status, body: data)
        }
    }

    // MARK: Authentication

    /// A valid token, authenticating first when there is none or it is about to expire.
    /// A valid bearer token for this device (also what the audit service accepts from owners).
    public func bearerToken() async throws -> String {
        if let current = token.withLock({ $0 }), current.expiresAt.timeIntervalSinceNow > 30 {
            return current.value
        }
        guard let credentials else {
            throw GrantServiceError(status: 401, code: "no_credentials", message: "this client has no device credentials")
        }
        let challenge: ChallengeResponse = try await send(
            .post, "v1/auth/challenge", body: ChallengeRequest(deviceID: credentials.deviceID), authenticated: false)
        let signature = credentials.signingKey.signature(
            for: DeviceAuthentication.signingInput(
                challengeID: challenge.challengeID, deviceID: credentials.deviceID, nonce: challenge.nonce))
        let issued: TokenResponse = try await send(
            .post, "v1/auth/token",
            body: TokenRequest(challengeID: challenge.challengeID, deviceID: credentials.deviceID, signature: Data(signature)),
            authenticated: false)
        token.withLock { $0 = (issued.token, issued.expiresAt) }
        return issued.token
    }
}

/// Placeholder body type for requests without one.
struct Empty: Codable, Sendable {}

/// An error answer of a Rescind service, or a failure to reach it (status 0, code
/// `unreachable`).
public struct GrantServiceError: Error, Sendable, Equatable, CustomStringConvertible {
    public let status: Int
    public let code: String
    public let message: String

    public init(status: Int, code: String, message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    init(status: Int, body: Data) {
        if let decoded = try? CanonicalJSON.decode(APIErrorBody.self, from: body) {
            self.init(status: status, code: decoded.error.code, message: decoded.error.message)
        } else {
            self.init(status: status, code: "http_\(status)", message: "the grant service answered HTTP \(status)")
        }
    }

    public var description: String { "\(message) (HTTP \(status), \(code))" }
}
