import Foundation

extension EnvironmentReader {
    /// librdkafka's security settings from the shared `RESCIND_KAFKA_*` variables, as raw
    /// properties for every producer and consumer of a component:
    ///
    /// | variable | property |
    /// |---|---|
    /// | `RESCIND_KAFKA_SECURITY_PROTOCOL` | `security.protocol` (`plaintext`, `ssl`, `sasl_plaintext`, `sasl_ssl`) |
    /// | `RESCIND_KAFKA_SSL_CA_LOCATION` | `ssl.ca.location` (PEM file of the brokers' CA) |
    /// | `RESCIND_KAFKA_SSL_CERTIFICATE_LOCATION` / `RESCIND_KAFKA_SSL_KEY_LOCATION` | `ssl.certificate.location` / `ssl.key.location` (client certificate) |
    /// | `RESCIND_KAFKA_SSL_ENDPOINT_IDENTIFICATION` | `ssl.endpoint.identification.algorithm` (`https` or `none`) |
    /// | `RESCIND_KAFKA_SASL_MECHANISM` | `sasl.mechanism` (`PLAIN`, `SCRAM-SHA-256`, `SCRAM-SHA-512`) |
    /// | `RESCIND_KAFKA_SASL_USERNAME` | `sasl.username` |
    /// | `RESCIND_KAFKA_SASL_PASSWORD_FILE` | `sasl.password`, read from the file (a secret file: `SecretFile`'s rule; trailing newline removed) |
    ///
    /// Unset variables leave librdkafka's defaults (plaintext).
    /// - Throws: `ConfigurationError` naming the variable that is wrong: an unknown protocol or
    ///   mechanism, a file that cannot be read, SASL settings without a SASL protocol, or half
    ///   of a client certificate.
    public mutating func kafkaSecurity() throws -> [String: String] {
        var properties: [String: String] = [:]
        let protocolName = optionalString("RESCIND_KAFKA_SECURITY_PROTOCOL")?.lowercased()
        if let protocolName {
            guard ["plaintext", "ssl", "sasl_plaintext", "sasl_ssl"].contains(protocolName) else {
                throw ConfigurationError(
                    variable: "RESCIND_KAFKA_SECURITY_PROTOCOL", problem: "expected plaintext, ssl, sasl_plaintext or sasl_ssl")
            }
            properties["security.protocol"] = protocolName
        }
        for (variable, property) in [
            ("RESCIND_KAFKA_SSL_CA_LOCATION", "ssl.ca.location"),
            ("RESCIND_KAFKA_SSL_CERTIFICATE_LOCATION", "ssl.certificate.location"),
            ("RESCIND_KAFKA_SSL_KEY_LOCATION", "ssl.key.location"),
        ] {
            guard let path = optionalString(variable) else { continue }
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw ConfigurationError(variable: variable, problem: "the file cannot be read")
            }
            properties[property] = path
        }
        if (properties["ssl.certificate.location"] == nil) != (properties["ssl.key.location"] == nil) {
            throw ConfigurationError(
                variable: "RESCIND_KAFKA_SSL_KEY_LOCATION", problem: "set it together with RESCIND_KAFKA_SSL_CERTIFICATE_LOCATION")
        }
        if let algorithm = optionalString("RESCIND_KAFKA_SSL_ENDPOINT_IDENTIFICATION")?.lowercased() {
            guard ["https", "none"].contains(algorithm) else {
                throw ConfigurationError(variable: "RESCIND_KAFKA_SSL_ENDPOINT_IDENTIFICATION", problem: "expected https or none")
            }
            properties["ssl.endpoint.identification.algorithm"] = algorithm
        }
        if let mechanism = optionalString("RESCIND_KAFKA_SASL_MECHANISM")?.uppercased() {
            guard ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"].contains(mechanism) else {
                throw ConfigurationError(variable: "RESCIND_KAFKA_SASL_MECHANISM", problem: "expected PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512")
            }
            properties["sasl.mechanism"] = mechanism
        }
        if let username = optionalString("RESCIND_KAFKA_SASL_USERNAME") { properties["sasl.username"] = username }
        if let path = optionalString("RESCIND_KAFKA_SASL_PASSWORD_FILE") {
            // A secret file like the services' keys (SecretFile's rule: a platform's mounted secret).
            let bytes: [UInt8]
            do {
                bytes = try SecretFile.read(path)
            } catch let error as SecretFileError {
                throw ConfigurationError(variable: "RESCIND_KAFKA_SASL_PASSWORD_FILE", problem: "\(path) \(error.problem)")
            }
            var password = String(decoding: bytes, as: UTF8.self)
            while password.hasSuffix("\n") || password.hasSuffix("\r") { password.removeLast() }
            properties["sasl.password"] = password
        }
        let usesSASL = properties.keys.contains { $0.hasPrefix("sasl.") }
        if usesSASL && !(protocolName?.hasPrefix("sasl_") ?? false) {
            throw ConfigurationError(
                variable: "RESCIND_KAFKA_SECURITY_PROTOCOL", problem: "SASL settings need sasl_ssl (or sasl_plaintext)")
        }
        return properties
    }
}
