import DeviceAgent
import Foundation
import Logging
import RescindClient

// rescind-agent: the headless device agent. Configuration from RESCIND_AGENT_* and the
// shared RESCIND_KAFKA_BOOTSTRAP_SERVERS / RESCIND_TOPIC_PREFIX (see README).
let usage = """
    usage: rescind-agent [run] [--locked]          run until SIGTERM/SIGINT; SIGUSR1 locks, SIGUSR2 unlocks
           rescind-agent sync                      one self-heal pass, then exit
           rescind-agent status [--json]           what this device holds (no secrets)
           rescind-agent at-rest on|off            encrypt / decrypt every cached record in place (agent stopped)
           rescind-agent export-backup --out FILE  the cache without any key (ciphertext under the FMKs + metadata)
           rescind-agent enroll --new-user --name NAME [--device-name NAME] [--device-kind KIND]
           rescind-agent enroll --bundle FILE      (bundle passphrase: RESCIND_AGENT_BUNDLE_PASSPHRASE)
           rescind-agent provision-device --name NAME [--kind KIND] --out FILE
                                                   (KIND: phone, tablet, laptop, desktop, server, other)
           rescind-agent rotate-identity [--bundle-out FILE]   new identity keys (after a theft); FILE: for the user's other devices
           rescind-agent update-identity --bundle FILE         take the keys another device of the user rotated to
           rescind-agent change-passphrase                     re-protect the keystore (new: RESCIND_AGENT_NEW_PASSPHRASE[_FILE]
                                                               or RESCIND_AGENT_NEW_KEY_FILE); keys and cache unchanged

    examples:
           RESCIND_AGENT_BUNDLE_PASSPHRASE=… rescind-agent provision-device --name "Adult B's iPad" --kind tablet --out ipad.bundle
           RESCIND_AGENT_BUNDLE_PASSPHRASE=… rescind-agent rotate-identity --bundle-out keys.update   (after a device was stolen)
           RESCIND_AGENT_BUNDLE_PASSPHRASE=… rescind-agent update-identity --bundle keys.update       (on the user's other devices)
           RESCIND_AGENT_NEW_KEY_FILE=/run/keys/new.key rescind-agent change-passphrase
    """

func option(_ name: String, in arguments: [String]) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

func required(_ name: String, in arguments: [String]) throws -> String {
    guard let value = option(name, in: arguments) else { throw UsageError(message: "\(name) is required\n\(usage)") }
    return value
}

struct UsageError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

func bundlePassphrase() throws -> String {
    guard let passphrase = ProcessInfo.processInfo.environment["RESCIND_AGENT_BUNDLE_PASSPHRASE"], !passphrase.isEmpty else {
        throw UsageError(message: "RESCIND_AGENT_BUNDLE_PASSPHRASE: set the identity bundle's passphrase")
    }
    return passphrase
}

do {
    let arguments = Array(CommandLine.arguments.dropFirst())
    let command = arguments.first.flatMap { $0.hasPrefix("--") ? nil : $0 } ?? "run"
    // Help needs no configuration.
    if ["help", "--help", "-h"].contains(command) || arguments.contains("--help") {
        print(usage)
        exit(0)
    }
    var configuration = try AgentConfiguration(environment: ProcessInfo.processInfo.environment)
    if arguments.contains("--locked") { configuration.startLocked = true }
    let level = Logger.Level(rawValue: configuration.logLevel) ?? .info
    LoggingSystem.bootstrap { label in
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = level
        return handler
    }
    let logger = Logger(label: "rescind.agent")

    switch command {
    case "run":
        let metrics = configuration.metricsFile.map { _ in AgentMetricsExport.bootstrapPrometheus() }
        try await DeviceAgent.open(configuration: configuration, logger: logger).run(metrics: metrics)
    case "sync":
        configuration.startLocked = false
        try await DeviceAgent.open(configuration: configuration, logger: logger).selfHeal()
    case "status":
        let status = try await AgentStatus.read(configuration: configuration)
        if arguments.contains("--json") {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            encoder.dateEncodingStrategy = .iso8601
            print(String(decoding: try encoder.encode(status), as: UTF8.self))
        } else {
            print(status.summary)
        }
    case "at-rest":
        guard arguments.count == 2, let setting = ["on": true, "off": false][arguments[1]] else {
            throw UsageError(message: "at-rest needs on or off\n\(usage)")
        }
        configuration.startLocked = false
        let migrated = try await DeviceAgent.open(configuration: configuration, logger: logger).setAtRestEncryption(setting)
        print("at-rest encryption \(arguments[1]); \(migrated) cached record(s) migrated")
    case "export-backup":
        let out = try required("--out", in: arguments)
        let archive = try await DeviceAgent.open(configuration: configuration, logger: logger).exportBackup(to: out)
        print("wrote \(archive.records.count) record(s) of \(archive.familyMembers.count) family member(s) to \(out); it holds no key")
    case "enroll":
        if let bundle = option("--bundle", in: arguments) {
            let enrolled = try await DeviceEnrollment.importBundle(
                at: bundle, passphrase: try bundlePassphrase(), configuration: configuration)
            print("enrolled device \(enrolled.deviceID.uuidString.lowercased()) of user \(enrolled.userID.uuidString.lowercased())")
        } else if arguments.contains("--new-user") {
            let name = try required("--name", in: arguments)
            let enrolled = try await DeviceEnrollment.registerNewUser(
                displayName: name, deviceName: option("--device-name", in: arguments) ?? "\(name)'s agent",
                deviceKind: try DeviceEnrollment.deviceKind(option("--device-kind", in: arguments)),
                configuration: configuration)
            print("registered user \(enrolled.userID.uuidString.lowercased()) with device \(enrolled.deviceID.uuidString.lowercased())")
        } else {
            throw UsageError(message: "enroll needs --bundle FILE or --new-user --name NAME\n\(usage)")
        }
    case "provision-device":
        let deviceID = try await DeviceEnrollment.provisionDevice(
            name: try required("--name", in: arguments), kind: try DeviceEnrollment.deviceKind(option("--kind", in: arguments)),
            bundlePath: try required("--out", in: arguments),
            passphrase: try bundlePassphrase(), configuration: configuration)
        print("registered device \(deviceID.uuidString.lowercased()); its identity bundle is at \(try required("--out", in: arguments))")
    case "rotate-identity":
        let outcome = try await KeystoreRotation.rotateIdentity(configuration: configuration)
        print("identity rotated: generation \(outcome.generation); \(outcome.rewrapped) key(s) moved")
        if let out = option("--bundle-out", in: arguments) {
            try await KeystoreRotation.writeIdentityUpdate(to: out, passphrase: try bundlePassphrase(), configuration: configuration)
            print("the new keys for your other devices are at \(out) (rescind-agent update-identity --bundle \(out))")
        }
    case "update-identity":
        let generation = try await KeystoreRotation.importIdentityUpdate(
            at: try required("--bundle", in: arguments), passphrase: try bundlePassphrase(), configuration: configuration)
        print("this device now holds the user's identity keys of generation \(generation); restart a running agent")
    case "change-passphrase":
        guard let newUnlock = try AgentConfiguration.Unlock.named(
            passphrase: "RESCIND_AGENT_NEW_PASSPHRASE", passphraseFile: "RESCIND_AGENT_NEW_PASSPHRASE_FILE",
            keyFile: "RESCIND_AGENT_NEW_KEY_FILE", in: ProcessInfo.processInfo.environment)
        else {
            throw UsageError(message: "change-passphrase: set RESCIND_AGENT_NEW_PASSPHRASE, _NEW_PASSPHRASE_FILE or _NEW_KEY_FILE")
        }
        try await KeystoreRotation.changeUnlock(configuration: configuration, to: newUnlock)
        print("keystore re-protected; start the agent with the new passphrase or key file from now on")
    default:
        throw UsageError(message: "unknown command \(command)\n\(usage)")
    }
} catch {
    FileHandle.standardError.write(Data("rescind-agent: \(error)\n".utf8))
    exit(1)
}
