import NIOCore
import NIOSSL
import RescindConfiguration

/// A server's certificate chain and private key (PEM files), as named by two variables such as
/// `RESCIND_GRANT_TLS_CERT_FILE` / `RESCIND_GRANT_TLS_KEY_FILE`. Given both, the service serves
/// HTTPS only; given neither, plain HTTP (development behind a loopback address only).
public struct ServerTLS: Sendable {
    public let certificateFile: String
    public let keyFile: String
    /// Variable names, for errors that say which setting is wrong (never its value).
    public let certificateVariable: String
    public let keyVariable: String
    /// How long a closing connection waits for the peer's TLS close_notify before it is closed
    /// anyway. swift-nio-ssl's default is 5 s, and a graceful shutdown waits that long for
    /// every idle keep-alive connection whose client does not answer; the requests are all
    /// answered by then, so a second is plenty.
    public var shutdownTimeout: Duration

    public init(
        certificateFile: String, keyFile: String, certificateVariable: String, keyVariable: String,
        shutdownTimeout: Duration = .seconds(1)
    ) {
        self.certificateFile = certificateFile
        self.keyFile = keyFile
        self.certificateVariable = certificateVariable
        self.keyVariable = keyVariable
        self.shutdownTimeout = shutdownTimeout
    }

    /// TLS 1.2 or later with the certificate chain and key, checked to belong together.
    /// - Throws: `ConfigurationError` naming the variable of the file that cannot be used:
    ///   missing, unreadable, not PEM, an empty chain, or a key that does not match the certificate.
    public func configuration() throws -> TLSConfiguration {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificateFile)
        } catch {
            throw ConfigurationError(variable: certificateVariable, problem: "cannot read a PEM certificate chain from the file")
        }
        guard !chain.isEmpty else {
            throw ConfigurationError(variable: certificateVariable, problem: "the file holds no PEM certificate")
        }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: keyFile, format: .pem)
        } catch {
            throw ConfigurationError(variable: keyVariable, problem: "cannot read a PEM private key from the file")
        }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        configuration.minimumTLSVersion = .tlsv12
        configuration.shutdownTimeout = TimeAmount(shutdownTimeout)
        do {
            // BoringSSL refuses a key that does not match the leaf certificate here.
            _ = try NIOSSLContext(configuration: configuration)
        } catch {
            throw ConfigurationError(variable: keyVariable, problem: "the key does not belong to the certificate in \(certificateVariable)")
        }
        return configuration
    }
}

extension EnvironmentReader {
    /// Both variables or neither: `nil` when neither is set (plain HTTP).
    /// - Throws: `ConfigurationError` naming the one that is missing when only one is set.
    public mutating func serverTLS(certificate: String, key: String) throws -> ServerTLS? {
        let certificateFile = optionalString(certificate)
        let keyFile = optionalString(key)
        switch (certificateFile, keyFile) {
        case (nil, nil): return nil
        case (let certificateFile?, let keyFile?):
            return ServerTLS(
                certificateFile: certificateFile, keyFile: keyFile, certificateVariable: certificate, keyVariable: key)
        case (nil, _): throw ConfigurationError(variable: certificate, problem: "set it together with \(key)")
        case (_, nil): throw ConfigurationError(variable: key, problem: "set it together with \(certificate)")
        }
    }
}
