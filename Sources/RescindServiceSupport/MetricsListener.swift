import Hummingbird
import HummingbirdCore
import Logging
import Prometheus
import RescindTLS
import ServiceLifecycle

/// `/metrics`, on the service's main port or on a port of its own.
///
/// A Kubernetes NetworkPolicy admits by address and port, never by path: while `/metrics`
/// shares the API's port, whoever may call the API may read the metrics too. On a port of its
/// own (`RESCIND_GRANT_METRICS_PORT`, `RESCIND_AUDIT_METRICS_PORT`) the policy can admit the
/// monitoring namespace there and no one else, and the main port answers `/metrics` with 404.
/// That listener serves HTTPS with the main port's certificate when the service has one (the
/// metrics name no user, but they are the service's traffic and state: they cross the network
/// encrypted like every other hop, and Prometheus keeps one scheme and CA for every target).
public enum MetricsListener {
    /// The Prometheus text exposition of `registry`.
    public static func response(_ registry: PrometheusCollectorRegistry) -> Response {
        Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
            body: .init(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
    }

    /// A server that answers `GET /metrics` from `registry` and 404 to anything else, on `host`
    /// and `port` with `tls` (`nil`: plain HTTP); run it as one of the service's services, so that
    /// it stops with it. Requests to it are not counted in the HTTP metrics: a scrape is not traffic.
    /// - Parameter onServerRunning: told the bound port (useful with port 0).
    /// - Throws: `ConfigurationError` when the certificate or key cannot be used.
    public static func server(
        host: String, port: Int, tls: ServerTLS?, registry: PrometheusCollectorRegistry, serverName: String, logger: Logger,
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) throws -> some Service {
        let router = Router(context: BasicRequestContext.self)
        router.get("metrics") { _, _ in response(registry) }
        return Application(
            router: router,
            server: try ServiceServer.builder(tls: tls),
            configuration: .init(address: .hostname(host, port: port), serverName: serverName),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? 0) },
            logger: logger)
    }
}
