import HummingbirdCore
import HummingbirdTLS
import RescindTLS

/// The HTTP server every Rescind service runs: HTTPS/1.1 when it was given a certificate and
/// key, plain HTTP/1.1 otherwise.
public enum ServiceServer {
    /// - Parameter http1: the HTTP/1.1 channel's settings (e.g. extra channel handlers).
    /// - Throws: `ConfigurationError` naming the certificate or key variable whose file cannot
    ///   be used, so that the service stops at start with that one line.
    public static func builder(tls: ServerTLS?, http1: HTTP1Channel.Configuration = .init()) throws -> HTTPServerBuilder {
        guard let tls else { return .http1(configuration: http1) }
        return try .tls(.http1(configuration: http1), tlsConfiguration: tls.configuration())
    }
}
