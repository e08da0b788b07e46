import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOSSL
import RescindTLS
import Tracing

/// The HTTP exchange under both service clients: one process-wide AsyncHTTPClient, so
/// every client in a process (an agent, the CLI, a benchmark hosting fifty agents) shares
/// one connection pool on NIO's shared event loops and nothing needs shutting down.
///
/// Not URLSession: on Linux it moved request and response bodies through libdispatch and
/// libcurl at ~16× the CPU of this client (measured: 100 round trips of a 1.4 MB body each
/// way, 5.2 s against 0.32 s of CPU), which made the owner's client, not the database, the
/// limit of a revocation (docs/benchmarks.md).
///
/// Every request goes through the `ClientTLS` policy: `https://` verified against its CA file
/// (set per request, so the shared pool keeps connections of different policies apart), plain
/// `http://` refused unless the policy allows it to a loopback address.
struct HTTPTransport: Sendable {
    /// Whole-exchange deadline per request.
    let timeout: Duration
    /// Larger answers are refused (the services page their lists far below this).
    let maximumResponseBytes: Int
    let tls: ClientTLS
    /// Built once: the CA file is read when the client is made, not per request.
    private let tlsConfiguration: Result<TLSConfiguration, ConfigurationErrorBox>

    init(timeout: Duration, tls: ClientTLS, maximumResponseBytes: Int = 256 << 20) {
        self.timeout = timeout
        self.tls = tls
        self.maximumResponseBytes = maximumResponseBytes
        self.tlsConfiguration = Result { try tls.configuration() }.mapError { ConfigurationErrorBox(description: "\($0)") }
    }

    struct ConfigurationErrorBox: Error { let description: String }

    /// `HTTPClient.shared`'s browser-like settings, but with three differences that matter here:
    /// a connection that cannot be established (refused, TLS handshake refused) fails the
    /// request at once instead of being retried until the request's deadline (callers have
    /// their own retry and backoff, and a user waiting 30 s to hear "connection refused" is
    /// worse than hearing it); redirects are never followed (a redirect would carry the
    /// device's bearer token to wherever the answer points); and up to 64 connections per
    /// service instead of a browser's 8, because one process may host many devices (the
    /// benchmark's agents, a fleet host): ten agents rotating at once send twenty requests, and
    /// with 8 connections twelve of them queued behind others' 1 MiB pages (docs/benchmarks.md,
    /// commit → last ack). A single agent or the CLI never has more than a few in flight.
    /// Never shut down, like `.shared`.
    static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration.singletonConfiguration
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.redirectConfiguration = .disallow
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = Self.connectionsPerService
        // Its own spans would record the full URL, which carries ids: `send` opens one instead.
        configuration.tracing.tracer = nil
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    static let connectionsPerService = 64

    struct Response: Sendable {
        let status: Int
        let body: Data
        let contentType: String?
        /// `Retry-After` in seconds, when the answer had one.
        var retryAfter: Int? = nil
    }

    /// Sends one request. A failure to reach the service or read its answer (a certificate the
    /// CA did not sign included) throws `GrantServiceError` with status 0 and code `unreachable`,
    /// whichever service it was; a URL the policy refuses, code `plain_http_refused`; a CA file
    /// that cannot be used, code `tls_configuration`. Nothing is sent in the last two cases.
    func send(
        _ method: String, _ url: URL, headers: [(String, String)] = [], body: Data? = nil,
        contentType: String = "application/json"
    ) async throws -> Response {
        do {
            try tls.check(url)
        } catch {
            throw GrantServiceError(status: 0, code: "plain_http_refused", message: "\(error)")
        }
        var request = HTTPClientRequest(url: url.absoluteString)
        switch tlsConfiguration {
        case .success(let configuration): request.tlsConfiguration = configuration
        case .failure(let error): throw GrantServiceError(status: 0, code: "tls_configuration", message: error.description)
        }
        request.method = HTTPMethod(rawValue: method)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body {
            request.headers.add(name: "Content-Type", value: contentType)
            request.body = .bytes(ByteBuffer(data: body))
        }
        do {
            // A client span per exchange, its trace context sent as `traceparent` (a no-op
            // without a tracer). Named by method only: the path may carry ids.
            return try await InstrumentationSystem.tracer.withAnySpan("HTTP \(method)", ofKind: .client) { span in
                span.attributes["http.request.method"] = method
                InstrumentationSystem.instrument.inject(span.context, into: &request.headers, using: HTTPHeadersInjector())
                let response = try await Self.client.execute(request, timeout: .init(timeout))
                span.attributes["http.response.status_code"] = Int(response.status.code)
                var buffer = try await response.body.collect(upTo: maximumResponseBytes)
                let data = buffer.readData(length: buffer.readableBytes) ?? Data()
                return Response(
                    status: Int(response.status.code), body: data, contentType: response.headers.first(name: "Content-Type"),
                    retryAfter: response.headers.first(name: "Retry-After").flatMap { Int($0) })
            }
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw GrantServiceError(
                status: 0, code: "unreachable", message: "cannot reach \(Self.origin(of: url)): \(reason(error))")
        }
    }

    /// `scheme://host:port`, never the path or query (they may carry identifiers).
    static func origin(of url: URL) -> String {
        "\(url.scheme ?? "http")://\(url.host ?? "?")\(url.port.map { ":\($0)" } ?? "")"
    }

    /// A one-line reason without the library's type dump.
    func reason(_ error: any Error) -> String {
        if let error = error as? HTTPClientError {
            switch error {
            case .deadlineExceeded, .readTimeout, .connectTimeout: return "timed out after \(timeout)"
            case .remoteConnectionClosed: return "the connection was closed"
            default: break
            }
        }
        if let error = error as? NIOSSLError, case .handshakeFailed = error {
            return "TLS handshake failed: the server's certificate is not trusted (check \(tls.caVariable)) or not for this host"
        }
        if error is NIOSSLExtraError {
            return "TLS: the server's certificate does not name this host"
        }
        let text = String(describing: error)
        if text.contains("Connection refused") || text.contains("connectionRefused") { return "connection refused" }
        return text.replacingOccurrences(of: "\n", with: " ")
    }
}

struct HTTPHeadersInjector: Injector {
    func inject(_ value: String, forKey key: String, into headers: inout HTTPHeaders) {
        headers.replaceOrAdd(name: key, value: value)
    }
}
