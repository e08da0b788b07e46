import Foundation
import RescindCrypto
import RescindMacros
import RescindProtocol
import RescindTLS
import Synchronization

/// The grant service's HTTP API for devices, agents and the CLI.
///
/// Every client in a process shares one connection pool (`HTTPTransport`), so clients
/// are cheap to make and to drop. With device credentials it authenticates by
/// challenge–response on first use, and renews its token by challenge–response too once a
/// third of its lifetime is left, sending the live token with the renewal so that the service
/// serves it in the device's own lane rather than among anonymous requests.
public final class GrantServiceClient: Sendable {
    public let baseURL: URL
    let transport: HTTPTransport
    let credentials: DeviceCredentials?
    private let token = Mutex<Token?>(nil)

    /// A bearer token and when it is due for renewal.
    struct Token: Sendable {
        let value: String
        let expiresAt: Date
        /// Once a third of the lifetime it was issued with is left.
        let renewAt: Date

        init(value: String, expiresAt: Date, received: Date = Date()) {
            self.value = value
            self.expiresAt = expiresAt
            renewAt = expiresAt.addingTimeInterval(-max(0, expiresAt.timeIntervalSince(received)) / 3)
        }

        /// Still good to send: more than 30 s left (a request takes its time to arrive).
        var isLive: Bool { expiresAt.timeIntervalSinceNow > 30 }
    }

    /// A device that can sign challenges.
    @MemberwiseInit
    public struct DeviceCredentials: Sendable {
        public let deviceID: UUID
        public let signingKey: Ed25519.PrivateKey
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
    /// How many times a shed request is asked again before its 503 is the answer.
    static let sheddingRetries = 3

    enum Method: String { case get = "GET", post = "POST", put = "PUT", delete = "DELETE" }

    /// Sends a request and decodes the answer; non-2xx answers throw `GrantServiceError`.
    func send<Response: Decodable>(
        _ method: Method, _ path: String, query: [URLQueryItem] = [], body: (some Encodable)? = nil as Empty?,
        authenticated: Bool = true, bearer: String? = nil, as type: Response.Type = Response.self
    ) async throws -> Response {
        let encoded = try body.map { try CanonicalJSON.encode($0) }
        let data = try await sendRaw(method, path, query: query, body: encoded, authenticated: authenticated, bearer: bearer).body
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
    ///   - bearer: for an unauthenticated request, a token to send all the same (a renewal's).
    func sendRaw(
        _ method: Method, _ path: String, query: [URLQueryItem], body: Data?, contentType: String = "application/json",
        accept: String? = nil, authenticated: Bool, bearer: String? = nil
    ) async throws -> HTTPTransport.Response {
        var retriedAuthentication = false
        var shedAnswers = 0
        while true {
            var components = URLComponents(url: baseURL.appendingPathComponent(path), resolvingAgainstBaseURL: false)!
            if !query.isEmpty { components.queryItems = query }
            var headers: [(String, String)] = accept.map { [("Accept", $0)] } ?? []
            if let bearer = authenticated ? try await bearerToken() : bearer {
                headers.append(("Authorization", "Bearer \(bearer)"))
            }
            let response = try await transport.send(
                method.rawValue, components.url!, headers: headers, body: body, contentType: contentType)
            let (data, status) = (response.body, response.status)
            if (200..<300).contains(status) { return response }
            // Shed (503 `overloaded`): the service did nothing; asked again after its Retry-After
            // (and up to half a second more, so that the shed do not all return at once).
            if status == 503, shedAnswers < Self.sheddingRetries, let wait = response.retryAfter,
                (try? CanonicalJSON.decode(APIErrorBody.self, from: data))?.error.code == "overloaded"
            {
                shedAnswers += 1
                Self.retriesAfterShedding.add(1, ordering: .relaxed)
                let jitter = Duration.milliseconds(Int.random(in: 0...500))
                try await Task.sleep(for: .seconds(min(max(wait, 0), Self.longestSheddingWait)) + jitter)
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

    /// A valid bearer token for this device (also what the audit service accepts from owners):
    /// the current one, renewed first when it is due; a new sign-in when there is none or it
    /// is about to expire. A renewal that fails while the current token lives keeps it (the
    /// next request tries again); only a sign-in's failure is thrown.
    public func bearerToken() async throws -> String {
        let current = token.withLock { $0 }
        if let current, current.isLive, current.renewAt > Date() { return current.value }
        let live = current.flatMap { $0.isLive ? $0.value : nil }
        do {
            return try await signIn(renewing: live)
        } catch let error where live != nil && !(error is CancellationError) {
            return live!
        }
    }

    /// Renews this device's token now, with the current one while it lives (the device's own
    /// lane), else by a new sign-in. - Throws: what the service answered.
    public func renewToken() async throws {
        _ = try await signIn(renewing: token.withLock { $0.flatMap { $0.isLive ? $0.value : nil } })
    }

    /// Challenge–response with the device key; with `renewing`, that token is sent along.
    private func signIn(renewing current: String?) async throws -> String {
        guard let credentials else {
            throw GrantServiceError(status: 401, code: "no_credentials", message: "this client has no device credentials")
        }
        let challenge: ChallengeResponse = try await send(
            .post, "v1/auth/challenge", body: ChallengeRequest(deviceID: credentials.deviceID), authenticated: false, bearer: current)
        let signature = credentials.signingKey.signature(
            for: DeviceAuthentication.signingInput(
                challengeID: challenge.challengeID, deviceID: credentials.deviceID, nonce: challenge.nonce))
        let issued: TokenResponse = try await send(
            .post, "v1/auth/token",
            body: TokenRequest(challengeID: challenge.challengeID, deviceID: credentials.deviceID, signature: Data(signature)),
            authenticated: false, bearer: current)
        token.withLock { $0 = Token(value: issued.token, expiresAt: issued.expiresAt) }
        return issued.token
    }
}

/// Placeholder body type for requests without one.
struct Empty: Codable, Sendable {}

/// An error answer of a Rescind service, or a failure to reach it (status 0, code
/// `unreachable`).
@MemberwiseInit
public struct GrantServiceError: Error, Sendable, Equatable, CustomStringConvertible {
    public let status: Int
    public let code: String
    public let message: String

    init(status: Int, body: Data) {
        if let decoded = try? CanonicalJSON.decode(APIErrorBody.self, from: body) {
            self.init(status: status, code: decoded.error.code, message: decoded.error.message)
        } else {
            self.init(status: status, code: "http_\(status)", message: "the grant service answered HTTP \(status)")
        }
    }

    public var description: String { "\(message) (HTTP \(status), \(code))" }
}
