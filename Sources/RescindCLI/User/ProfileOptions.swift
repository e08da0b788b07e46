import ArgumentParser
import Foundation
import RescindClient
import RescindConfiguration
import RescindCrypto
import RescindTLS

#if canImport(Glibc)
import Glibc
#endif

/// Where this user's keystore lives and which services to talk to. The CLI is a device
/// of its user, enrolled like an agent; its keystore has the same format.
struct ProfileOptions: ParsableArguments {
    @Option(help: "Profile directory holding the encrypted keystore (default: $RESCIND_PROFILE or ~/.rescind).")
    var profile: String?

    @Option(help: "Grant service URL (default: $RESCIND_GRANT_SERVICE_URL or https://127.0.0.1:8080).")
    var grantService: String?

    @Option(help: "Audit service URL (default: $RESCIND_AUDIT_SERVICE_URL or https://127.0.0.1:8081).")
    var auditService: String?

    var environment: [String: String] { ProcessInfo.processInfo.environment }

    var directory: String {
        profile ?? EnvironmentReader.value("RESCIND_PROFILE", in: environment) ?? (NSHomeDirectory() + "/.rescind")
    }

    var grantServiceURL: URL {
        get throws { try url(grantService ?? EnvironmentReader.value("RESCIND_GRANT_SERVICE_URL", in: environment) ?? "https://127.0.0.1:8080", "--grant-service") }
    }

    var auditServiceURL: URL {
        get throws { try url(auditService ?? EnvironmentReader.value("RESCIND_AUDIT_SERVICE_URL", in: environment) ?? "https://127.0.0.1:8081", "--audit-service") }
    }

    /// How both services are reached: `RESCIND_CA_FILE` (PEM CAs their certificates are checked
    /// against; unset: the system's roots) and `RESCIND_ALLOW_PLAIN_HTTP=loopback`.
    var tls: ClientTLS {
        get throws {
            var reader = EnvironmentReader(environment)
            do {
                let tls = try reader.clientTLS(ca: "RESCIND_CA_FILE", plainHTTP: "RESCIND_ALLOW_PLAIN_HTTP")
                _ = try tls.configuration()
                return tls
            } catch let error as ConfigurationError {
                throw CLIError(error.description)
            }
        }
    }

    private func url(_ text: String, _ option: String) throws -> URL {
        guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https" else {
            throw CLIError("\(option) must be an http(s) URL")
        }
        do {
            try tls.check(url)
        } catch {
            throw CLIError("\(option): \(error)")
        }
        return url
    }

    /// RESCIND_PASSPHRASE, RESCIND_PASSPHRASE_FILE, RESCIND_KEY_FILE, or a prompt on the terminal.
    func unlock() throws -> AgentConfiguration.Unlock {
        var reader = EnvironmentReader(environment)
        if let passphrase = reader.secret("RESCIND_PASSPHRASE") { return .passphrase(passphrase) }
        if let path = reader.optionalString("RESCIND_PASSPHRASE_FILE") { return .passphraseFile(path) }
        if let path = reader.optionalString("RESCIND_KEY_FILE") { return .keyFile(path) }
        guard isatty(STDIN_FILENO) == 1, let typed = getpass("Passphrase for \(directory): ") else {
            throw CLIError("set RESCIND_PASSPHRASE (or RESCIND_PASSPHRASE_FILE / RESCIND_KEY_FILE) to unlock \(directory)")
        }
        return .passphrase(String(cString: typed))
    }

    /// The agent configuration of this profile; the grant service's key is learnt from it (TOFU).
    func configuration() async throws -> AgentConfiguration {
        let url = try grantServiceURL
        let tls = try tls
        let served = try await GrantServiceClient(baseURL: url, tls: tls).serviceKey()
        var configuration = AgentConfiguration(
            dataDirectory: directory, grantServiceURL: url,
            grantServiceKey: try Ed25519.PublicKey(rawRepresentation: [UInt8](served.signingPublicKey)),
            kafka: .init(bootstrapServers: EnvironmentReader.value("RESCIND_KAFKA_BOOTSTRAP_SERVERS", in: environment) ?? "127.0.0.1:9092"),
            unlock: try unlock())
        configuration.tls = tls
        return configuration
    }

    /// Unlocks the keystore and acts as this profile's device.
    func session() async throws -> UserSession {
        do {
            let session = try await DeviceIdentity.session(configuration: try await configuration())
            // Whatever the command, a change to who the user is that another device began is shown first.
            GovernanceBanner.warn(try await session.client.governedOperations(), thisDevice: session.deviceID)
            // A key history this profile refuses is reported to the audit service as this device.
            return session.reporting(
                to: AuditServiceViolationReporter(
                    audit: AuditServiceClient(baseURL: try auditServiceURL, grantService: session.client, tls: try tls)))
        } catch let error as AgentError where error.code == .notEnrolled {
            // The agent's advice names `rescind-agent enrol`; a CLI user creates an identity.
            throw CLIError("no keystore in \(directory): run `rescind identity create --name …` first (or pass --profile)")
        }
    }
}

extension UUID: @retroactive ExpressibleByArgument {
    public init?(argument: String) {
        self.init(uuidString: argument)
    }
}
