import ArgumentParser
import Foundation
import DeviceAgent
import Logging
import RescindTracing
import RescindClient
import RescindConfiguration
import RescindObservability
import RescindProtocol

/// rescind-agent's one help page, for the command and every subcommand (main.swift prints it
/// before parsing).
let usage = """
    usage: rescind-agent [run] [--locked]          run until SIGTERM/SIGINT; SIGUSR1 locks, SIGUSR2 unlocks
           rescind-agent sync                      one self-heal pass, then exit
           rescind-agent status [--json]           what this device holds (no secrets)
           rescind-agent at-rest on|off            encrypt / decrypt every cached record in place (agent stopped)
           rescind-agent export-backup --out FILE  the cache without any key (ciphertext under the FMKs + metadata)
           rescind-agent enrol --new-user --name NAME [--device-name NAME] [--device-kind KIND]
           rescind-agent enrol --bundle FILE       (bundle passphrase: RESCIND_AGENT_BUNDLE_PASSPHRASE)
           rescind-agent provision-device --name NAME [--kind KIND] --out FILE
                                                   (KIND: phone, tablet, laptop, desktop, server, other)
           rescind-agent rotate-identity [--words-file F] [--bundle-out FILE]
                                                   new identity keys (after a theft): pending for the security delay
                                                   unless approved (F: the recovery words); FILE: for the user's other devices
           rescind-agent pending                   changes to who the user is that wait for the security delay
           rescind-agent veto OP | approve OP      veto (freezing the device that began it) or approve one begun elsewhere
           rescind-agent certify --words-file F    the recovery words (F) certify this device's key: its approval then
                                                   makes a rotation or transfer begun on another certified device immediate
           rescind-agent update-identity --bundle FILE         take the keys another device of the user rotated to
           rescind-agent change-passphrase                     re-protect the keystore (new: RESCIND_AGENT_NEW_PASSPHRASE[_FILE]
                                                               or RESCIND_AGENT_NEW_KEY_FILE); keys and cache unchanged

    examples:
           RESCIND_AGENT_BUNDLE_PASSPHRASE=… rescind-agent provision-device --name "Adult B's iPad" --kind tablet --out ipad.bundle
           RESCIND_AGENT_BUNDLE_PASSPHRASE=… rescind-agent rotate-identity --bundle-out keys.update   (after a device was stolen)
           RESCIND_AGENT_BUNDLE_PASSPHRASE=… rescind-agent update-identity --bundle keys.update       (on the user's other devices)
           RESCIND_AGENT_NEW_KEY_FILE=/run/keys/new.key rescind-agent change-passphrase
    """

/// rescind-agent's subcommands.
struct RescindAgent: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rescind-agent",
        abstract: "The headless device agent.",
        version: RescindVersion.current,
        subcommands: [
            RunCommand.self, SyncCommand.self, StatusCommand.self, AtRestCommand.self, ExportBackupCommand.self, EnrolCommand.self, ProvisionDeviceCommand.self,
            RotateIdentityCommand.self, UpdateIdentityCommand.self, ChangePassphraseCommand.self, PendingCommand.self,
            VetoCommand.self, ApproveCommand.self, CertifyCommand.self,
        ],
        defaultSubcommand: RunCommand.self
    )
}

/// A subcommand: main.swift parses the arguments into one and awaits `execute()`. (Not `run()`:
/// called on an existential, `run()` can resolve to ParsableCommand's synchronous default,
/// which only prints help.)
protocol AgentSubcommand: ParsableCommand {
    func execute() async throws
}

struct UsageError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// The configuration from the environment and the process's logger, read once a subcommand runs.
struct AgentEnvironment {
    var configuration: AgentConfiguration
    let logger: Logger

    init() throws {
        configuration = try AgentConfiguration(environment: ProcessInfo.processInfo.environment)
        try RescindLogging.bootstrap(level: configuration.logLevel, environment: ProcessInfo.processInfo.environment)
        logger = Logger(label: "rescind.agent")
    }

    /// An agent opened with its keys (`startLocked` off), for the commands that need them.
    func openUnlocked() async throws -> DeviceAgent {
        var configuration = configuration
        configuration.startLocked = false
        return try await DeviceAgent.open(configuration: configuration, logger: logger)
    }

    static func bundlePassphrase() throws -> String {
        guard let passphrase = EnvironmentReader.secret("RESCIND_AGENT_BUNDLE_PASSPHRASE", in: ProcessInfo.processInfo.environment) else {
            throw UsageError(message: "RESCIND_AGENT_BUNDLE_PASSPHRASE: set the identity bundle's passphrase")
        }
        return passphrase
    }
}

struct RunCommand: AgentSubcommand {
    static let configuration = CommandConfiguration(commandName: "run", abstract: "Run until SIGTERM/SIGINT; SIGUSR1 locks, SIGUSR2 unlocks.")

    @Flag(help: "Start without reading any secret; SIGUSR2 unlocks.") var locked = false

    func execute() async throws {
        var environment = try AgentEnvironment()
        if locked { environment.configuration.startLocked = true }
        let metrics = environment.configuration.metricsFile.map { _ in AgentMetricsExport.bootstrapPrometheus() }
        let tracing = try OTLPExporter.bootstrap(serviceName: "rescind-agent", environment: ProcessInfo.processInfo.environment)
        try await DeviceAgent.open(configuration: environment.configuration, logger: environment.logger)
            .run(metrics: metrics, boundedShutdown: true, tracing: tracing)
    }
}

struct SyncCommand: AgentSubcommand {
    static let configuration = CommandConfiguration(commandName: "sync", abstract: "One self-heal pass, then exit.")

    func execute() async throws {
        try await AgentEnvironment().openUnlocked().selfHeal()
    }
}

struct StatusCommand: AgentSubcommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "What this device holds (no secrets).")

    @Flag var json = false

    func execute() async throws {
        let status = try await AgentStatus.read(configuration: AgentEnvironment().configuration)
        if json {
            let encoder = CanonicalJSON.encoder()
            encoder.outputFormatting.insert(.prettyPrinted)
            print(String(decoding: try encoder.encode(status), as: UTF8.self))
        } else {
            print(status.summary)
        }
    }
}

struct AtRestCommand: AgentSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "at-rest", abstract: "Encrypt / decrypt every cached record in place (agent stopped).")

    @Argument(help: "on or off") var setting: String

    func execute() async throws {
        guard let enabled = ["on": true, "off": false][setting] else {
            throw UsageError(message: "at-rest needs on or off\n\(usage)")
        }
        let migrated = try await AgentEnvironment().openUnlocked().setAtRestEncryption(enabled)
        print("at-rest encryption \(setting); \(migrated) cached record(s) migrated")
    }
}

struct ExportBackupCommand: AgentSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "export-backup", abstract: "The cache without any key (ciphertext under the FMKs + metadata).")

    @Option var out: String

    func execute() async throws {
        let environment = try AgentEnvironment()
        let archive = try await DeviceAgent.open(configuration: environment.configuration, logger: environment.logger)
            .exportBackup(to: out)
        print("wrote \(archive.records.count) record(s) of \(archive.familyMembers.count) family member(s) to \(out); it holds no key")
    }
}

struct EnrolCommand: AgentSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "enrol", abstract: "Enrol this device: a new user, or from an identity bundle.",
        aliases: ["enroll"])

    @Option var bundle: String?
    @Flag(name: .customLong("new-user")) var newUser = false
    @Option var name: String?
    @Option(name: .customLong("device-name")) var deviceName: String?
    @Option(name: .customLong("device-kind")) var deviceKind: String?

    func execute() async throws {
        let configuration = try AgentEnvironment().configuration
        if let bundle {
            let enrolled = try await AgentEnrolment.importBundle(
                at: bundle, passphrase: try AgentEnvironment.bundlePassphrase(), configuration: configuration)
            print("enrolled device \(enrolled.deviceID.uuidString.lowercased()) of user \(enrolled.userID.uuidString.lowercased())")
        } else if newUser {
            guard let name else { throw UsageError(message: "--name is required\n\(usage)") }
            let enrolled = try await AgentEnrolment.registerNewUser(
                displayName: name, deviceName: deviceName ?? "\(name)'s agent",
                deviceKind: try AgentEnrolment.deviceKind(deviceKind), configuration: configuration)
            print("registered user \(enrolled.userID.uuidString.lowercased()) with device \(enrolled.deviceID.uuidString.lowercased())")
        } else {
            throw UsageError(message: "enrol needs --bundle FILE or --new-user --name NAME\n\(usage)")
        }
    }
}

struct ProvisionDeviceCommand: AgentSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "provision-device", abstract: "Register another device of this user and write its identity bundle.")

    @Option var name: String
    @Option var kind: String?
    @Option var out: String

    func execute() async throws {
        let configuration = try AgentEnvironment().configuration
        let deviceID = try await AgentEnrolment.provisionDevice(
            name: name, kind: try AgentEnrolment.deviceKind(kind), bundlePath: out,
            passphrase: try AgentEnvironment.bundlePassphrase(), configuration: configuration)
        print("registered device \(deviceID.uuidString.lowercased()); its identity bundle is at \(out)")
    }
}

struct RotateIdentityCommand: AgentSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "rotate-identity", abstract: "New identity keys (after a theft).")

    @Option(name: .customLong("bundle-out")) var bundleOut: String?
    @Option(name: .customLong("words-file")) var wordsFile: String?

    func execute() async throws {
        let configuration = try AgentEnvironment().configuration
        let outcome = try await KeystoreRotation.rotateIdentity(
            configuration: configuration, recoveryKey: try wordsFile.map { try RecoveryKey(wordsFile: $0) })
        if let pending = outcome.pending {
            print(
                "identity rotation pending: operation \(pending.operationID.uuidString.lowercased()), takes effect "
                    + "\(Timestamp.format(pending.effectiveAt)) unless vetoed; approve it on another device, or run again with --words-file")
            return
        }
        print(
            "identity rotated: generation \(outcome.generation); \(outcome.rewrapped) key(s) moved; key backup "
                + (outcome.backedUp ? "renewed" : "still of the previous keys (rescind identity backup renews it)"))
        if let bundleOut {
            try await KeystoreRotation.writeIdentityUpdate(
                to: bundleOut, passphrase: try AgentEnvironment.bundlePassphrase(), configuration: configuration)
            print("the new keys for your other devices are at \(bundleOut) (rescind-agent update-identity --bundle \(bundleOut))")
        }
    }
}

/// The user's pending governed operations, as this device sees them.
struct PendingCommand: AgentSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "pending", abstract: "Changes to who the user is that wait for the security delay.")

    /// The service's list, and any operation this device was told is pending (a signed notice it
    /// keeps) that the service no longer lists at all: a service that hides an operation from the
    /// listing cannot hide it from a device that heard it announced.
    func execute() async throws {
        let configuration = try AgentEnvironment().configuration
        let session = try await DeviceIdentity.session(configuration: configuration)
        let listed = try await session.client.governedOperations()
        let pending = listed.filter { $0.state == .pending }
        let unlisted = try await AgentStatus.read(configuration: configuration).pendingGovernance.filter { notice in
            !listed.contains { $0.operationID == notice.operationID }
        }
        if pending.isEmpty && unlisted.isEmpty { print("nothing pending") }
        for operation in pending {
            let by = operation.initiatedBy == session.deviceID ? "this device" : "device \(operation.initiatedBy.uuidString.lowercased())"
            print(
                "\(operation.operationID.uuidString.lowercased())  \(operation.kind.rawValue) begun by \(by), "
                    + "takes effect \(Timestamp.format(operation.effectiveAt)) unless vetoed")
        }
        for notice in unlisted {
            print(
                "\(notice.operationID?.uuidString.lowercased() ?? "?")  \(notice.change.rawValue) announced to this device as pending "
                    + "at \(Timestamp.format(notice.occurredAt)), but the grant service no longer lists it")
        }
    }
}

struct VetoCommand: AgentSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "veto", abstract: "Veto an operation another device of the user began (that device is frozen).")

    @Argument(transform: OperationID.parse) var operation: UUID

    func execute() async throws {
        let session = try await DeviceIdentity.session(configuration: try AgentEnvironment().configuration)
        let decided = try await session.client.vetoOperation(operation)
        print("operation \(decided.operationID.uuidString.lowercased()) \(decided.state.rawValue); device \(decided.initiatedBy.uuidString.lowercased()) frozen")
    }
}

struct ApproveCommand: AgentSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "approve",
        abstract: "Approve an operation another device of the user began: it takes effect now (an identity rotation an hour after it began, and a transfer not at all, unless both devices are certified).")

    @Argument(transform: OperationID.parse) var operation: UUID

    func execute() async throws {
        let session = try await DeviceIdentity.session(configuration: try AgentEnvironment().configuration)
        let decided = try await session.approve(operation)
        print("operation \(decided.operationID.uuidString.lowercased()) \(decided.state.rawValue)")
        if decided.state == .pending { print("takes effect at \(Timestamp.format(decided.effectiveAt)) unless vetoed") }
    }
}

struct CertifyCommand: AgentSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "certify", abstract: "The recovery words certify this device's key (its approvals then count beside another certified device's).")

    @Option(name: .customLong("words-file")) var wordsFile: String

    func execute() async throws {
        let key = try RecoveryKey(wordsFile: wordsFile)
        let session = try await DeviceIdentity.session(configuration: try AgentEnvironment().configuration)
        try await session.certifyThisDevice(with: key)
        print("device \(session.deviceID.uuidString.lowercased()) certified by the recovery key")
    }
}

enum OperationID {
    static func parse(_ text: String) throws -> UUID {
        guard let id = UUID(uuidString: text) else { throw ValidationError("\(text) is not an operation id (rescind-agent pending)") }
        return id
    }
}

struct UpdateIdentityCommand: AgentSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "update-identity", abstract: "Take the keys another device of the user rotated to.")

    @Option var bundle: String

    func execute() async throws {
        let configuration = try AgentEnvironment().configuration
        let generation = try await KeystoreRotation.importIdentityUpdate(
            at: bundle, passphrase: try AgentEnvironment.bundlePassphrase(), configuration: configuration)
        print("this device now holds the user's identity keys of generation \(generation); restart a running agent")
    }
}

struct ChangePassphraseCommand: AgentSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "change-passphrase", abstract: "Re-protect the keystore; keys and cache unchanged.")

    func execute() async throws {
        let configuration = try AgentEnvironment().configuration
        guard let newUnlock = try AgentConfiguration.Unlock.named(
            passphrase: "RESCIND_AGENT_NEW_PASSPHRASE", passphraseFile: "RESCIND_AGENT_NEW_PASSPHRASE_FILE",
            keyFile: "RESCIND_AGENT_NEW_KEY_FILE", in: ProcessInfo.processInfo.environment)
        else {
            throw UsageError(message: "change-passphrase: set RESCIND_AGENT_NEW_PASSPHRASE, _NEW_PASSPHRASE_FILE or _NEW_KEY_FILE")
        }
        try await KeystoreRotation.changeUnlock(configuration: configuration, to: newUnlock)
        print("keystore re-protected; start the agent with the new passphrase or key file from now on")
    }
}
