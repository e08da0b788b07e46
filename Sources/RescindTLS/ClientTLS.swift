import Foundation
import NIOSSL
import RescindConfiguration

/// How a client (the CLI, an agent, the audit service calling the grant service) reaches a
/// Rescind service: `https://` verified against a CA file (or the system's trust roots), and
/// plain `http://` refused unless explicitly allowed, and then only to a loopback address.
public struct ClientTLS: Sendable, Hashable {
    /// Whether plain `http://` may be used at all.
    public enum PlainHTTP: String, Sendable, Hashable {
        /// Every URL must be `https://` (the default).
        case refused = "never"
        /// `http://` to 127.0.0.0/8, ::1 or `localhost` only (development on one machine).
        case loopback
    }

    /// PEM file of the CA certificates that sign the services' certificates; `nil`: the
    /// system's trust roots.
    public var caFile: String?
    public var plainHTTP: PlainHTTP
    /// The variables these came from, named in errors.
    public var caVariable: String
    public var plainHTTPVariable: String

    public init(
        caFile: String? = nil, plainHTTP: PlainHTTP = .refused, caVariable: String = "RESCIND_CA_FILE",
        plainHTTPVariable: String = "RESCIND_ALLOW_PLAIN_HTTP"
    ) {
        self.caFile = caFile
        self.plainHTTP = plainHTTP
        self.caVariable = caVariable
        self.plainHTTPVariable = plainHTTPVariable
    }

    /// System trust roots, plain HTTP refused.
    public static let strict = ClientTLS()

    /// Refuses a URL this policy does not allow, with one line saying what to do.
    /// - Throws: `ClientTLSError.plainHTTPRefused` for `http://` to anything but an allowed
    ///   loopback address, `.unsupportedScheme` for anything but http(s).
    public func check(_ url: URL) throws {
        switch url.scheme?.lowercased() {
        case "https": return
        case "http":
            let host = url.host ?? ""
            guard plainHTTP == .loopback, Self.isLoopback(host) else {
                throw ClientTLSError.plainHTTPRefused(
                    origin: "http://\(host)\(url.port.map { ":\($0)" } ?? "")",
                    advice: Self.isLoopback(host)
                        ? "use https://, or set \(plainHTTPVariable)=loopback to allow it to a loopback address"
                        : "use https:// (plain HTTP is allowed only to a loopback address)")
            }
        default:
            throw ClientTLSError.unsupportedScheme(url.scheme ?? "")
        }
    }

    /// The client side of TLS 1.2+, verifying the server's certificate and host name against
    /// `caFile` (or the system's roots).
    /// - Throws: `ConfigurationError` naming `caVariable` when the file holds no usable certificate.
    public func configuration() throws -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = .tlsv12
        configuration.certificateVerification = .fullVerification
        if let caFile {
            let certificates: [NIOSSLCertificate]
            do {
                certificates = try NIOSSLCertificate.fromPEMFile(caFile)
            } catch {
                throw ConfigurationError(variable: caVariable, problem: "cannot read PEM CA certificates from the file")
            }
            guard !certificates.isEmpty else {
                throw ConfigurationError(variable: caVariable, problem: "the file holds no PEM certificate")
            }
            configuration.trustRoots = .certificates(certificates)
        }
        return configuration
    }

    /// 127.0.0.0/8, ::1 and `localhost`: names that never leave the machine.
    public static func isLoopback(_ host: String) -> Bool {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if bare.lowercased() == "localhost" || bare == "::1" { return true }
        let parts = bare.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }
}

extension EnvironmentReader {
    /// A client's policy from `<ca>` (a PEM file) and `<plain>` (`loopback` or `never`, default `never`).
    /// - Throws: `ConfigurationError` naming `<plain>` for any other value.
    public mutating func clientTLS(ca: String, plainHTTP: String) throws -> ClientTLS {
        let caFile = optionalString(ca)
        let text = optionalString(plainHTTP)?.lowercased() ?? ClientTLS.PlainHTTP.refused.rawValue
        guard let policy = ClientTLS.PlainHTTP(rawValue: text) else {
            throw ConfigurationError(variable: plainHTTP, problem: "expected loopback or never")
        }
        return ClientTLS(caFile: caFile, plainHTTP: policy, caVariable: ca, plainHTTPVariable: plainHTTP)
    }
}

/// A URL that a `ClientTLS` policy does not allow.
public enum ClientTLSError: Error, CustomStringConvertible, Sendable, Equatable {
    case plainHTTPRefused(origin: String, advice: String)
    case unsupportedScheme(String)

    public var description: String {
        switch self {
        case .plainHTTPRefused(let origin, let advice): return "refusing plain HTTP to \(origin): \(advice)"
        case .unsupportedScheme(let scheme): return "unsupported URL scheme '\(scheme)': use https://"
        }
    }
}
