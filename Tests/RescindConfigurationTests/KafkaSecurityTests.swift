import Foundation
import RescindConfiguration
import Testing

/// TLS and SASL settings for the brokers pass through to librdkafka, checked on the way.
@Suite struct KafkaSecurityTests {
    static func file(_ contents: String, mode: Int = 0o600) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rescind-kafka-\(UUID().uuidString)").path
        try Data(contents.utf8).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        return path
    }

    @Test func unsetMeansLibrdkafkasDefaults() throws {
        var reader = EnvironmentReader([:])
        #expect(try reader.kafkaSecurity() == [:])
    }

    @Test func saslOverTLSWithACAAndAPasswordFile() throws {
        let ca = try Self.file("-----BEGIN CERTIFICATE-----\n")
        let password = try Self.file("s3cret\n")
        defer { [ca, password].forEach { try? FileManager.default.removeItem(atPath: $0) } }
        var reader = EnvironmentReader([
            "RESCIND_KAFKA_SECURITY_PROTOCOL": "SASL_SSL", "RESCIND_KAFKA_SSL_CA_LOCATION": ca,
            "RESCIND_KAFKA_SASL_MECHANISM": "scram-sha-512", "RESCIND_KAFKA_SASL_USERNAME": "rescind-grant",
            "RESCIND_KAFKA_SASL_PASSWORD_FILE": password, "RESCIND_KAFKA_SSL_ENDPOINT_IDENTIFICATION": "https",
        ])
        #expect(try reader.kafkaSecurity() == [
            "security.protocol": "sasl_ssl", "ssl.ca.location": ca, "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.username": "rescind-grant", "sasl.password": "s3cret", "ssl.endpoint.identification.algorithm": "https",
        ])
    }

    /// The password file is a secret file: one others can read is refused, saying so.
    @Test func aPasswordFileOpenToOthersIsRefused() throws {
        let password = try Self.file("s3cret\n", mode: 0o644)
        defer { try? FileManager.default.removeItem(atPath: password) }
        var reader = EnvironmentReader(["RESCIND_KAFKA_SECURITY_PROTOCOL": "sasl_ssl", "RESCIND_KAFKA_SASL_PASSWORD_FILE": password])
        let error = #expect(throws: ConfigurationError.self) { try reader.kafkaSecurity() }
        #expect(error?.variable == "RESCIND_KAFKA_SASL_PASSWORD_FILE")
        #expect(error?.description.contains("\(password) is open to other users (mode 0644)") == true, "\(error.map { "\($0)" } ?? "")")
        #expect(error?.description.contains("s3cret") == false)
    }

    @Test func aWrongSettingNamesItsVariableNeverItsValue() throws {
        let certificate = try Self.file("certificate")
        defer { try? FileManager.default.removeItem(atPath: certificate) }
        for (environment, variable) in [
            (["RESCIND_KAFKA_SECURITY_PROTOCOL": "tls"], "RESCIND_KAFKA_SECURITY_PROTOCOL"),
            (["RESCIND_KAFKA_SSL_CA_LOCATION": "/nonexistent/ca.pem"], "RESCIND_KAFKA_SSL_CA_LOCATION"),
            (["RESCIND_KAFKA_SSL_CERTIFICATE_LOCATION": certificate], "RESCIND_KAFKA_SSL_KEY_LOCATION"),
            (["RESCIND_KAFKA_SECURITY_PROTOCOL": "sasl_ssl", "RESCIND_KAFKA_SASL_MECHANISM": "GSSAPI"], "RESCIND_KAFKA_SASL_MECHANISM"),
            (["RESCIND_KAFKA_SASL_USERNAME": "user-name-secret"], "RESCIND_KAFKA_SECURITY_PROTOCOL"),
            (["RESCIND_KAFKA_SECURITY_PROTOCOL": "sasl_ssl", "RESCIND_KAFKA_SASL_PASSWORD_FILE": "/nonexistent"], "RESCIND_KAFKA_SASL_PASSWORD_FILE"),
        ] {
            var reader = EnvironmentReader(environment)
            let error = #expect(throws: ConfigurationError.self) { try reader.kafkaSecurity() }
            #expect(error?.variable == variable, "\(environment)")
            #expect(error?.description.contains("user-name-secret") == false)
        }
    }
}
