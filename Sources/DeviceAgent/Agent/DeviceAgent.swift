import Foundation
import Logging
import RescindClient
import RescindCrypto
import RescindLifecycle
import RescindObservability
import RescindTracing
import ServiceLifecycle
import UnixSignals

/// A running device: keystore unlocked, local cache open, and the four services that keep
/// it converged (command consumer, command executor, ack publisher, periodic self-heal).
public final class DeviceAgent: Sendable {
    let engine: AgentEngine

    public var deviceID: UUID { engine.identity.deviceID }
    public var userID: UUID { engine.identity.userID }
    /// Whether the agent runs without its keys (see `lock()`).
    public var isLocked: Bool { engine.isLocked }

    /// Opens an enrolled device.
    ///
    /// Refuses to start (with a one-line `AgentError`) when the data directory or a key file
    /// is accessible by other users, when the passphrase or key file is wrong, or when the
    /// device was never enrolled. Finishes an erasure a crash interrupted (VACUUM).
    ///
    /// With `configuration.startLocked` nothing secret is read: the agent runs locked until
    /// `unlock()` (SIGUSR2 for `run`).
    /// - Parameter violationReporter: where refused key histories go; by default signed onto
    ///   `device_acks` through the agent's ack outbox (`AgentViolationReporter`).
    public static func open(
        configuration: AgentConfiguration, logger: Logger,
        violationReporter: (any KeyChainViolationReporting)? = nil
    ) async throws -> DeviceAgent {
        try await DeviceAgent(
            configuration: configuration, logger: logger, faults: AgentFaults(), violationReporter: violationReporter)
    }

    /// An agent with the dev kit's faults (`AgentFaultPlans`); the product opens with none (`open`).
    package init(
        configuration: AgentConfiguration, logger: Logger, faults: AgentFaults,
        violationReporter: (any KeyChainViolationReporting)? = nil
    ) async throws {
        try SecureFiles.prepareDirectory(configuration.dataDirectory)
        let keystore: Keystore?
        let identity: KeystoreIdentity
        if configuration.startLocked {
            if case .passphrase = configuration.unlock {
                throw AgentError(
                    .configuration,
                    "a locked agent unlocks from RESCIND_AGENT_PASSPHRASE_FILE or RESCIND_AGENT_KEY_FILE, not RESCIND_AGENT_PASSPHRASE")
            }
            keystore = nil
            identity = try KeystoreIdentity.read(path: configuration.keystorePath)
        } else {
            let opened = try await Keystore.open(path: configuration.keystorePath, unlock: configuration.unlock)
            keystore = opened
            identity = KeystoreIdentity(opened)
        }
        let store = try AgentStore(path: configuration.databasePath)
        // What a crash left in the write-ahead log goes into the database, and an erasure's
        // unfinished VACUUM is finished, before anything else runs.
        try await store.scrub()
        try await store.vacuumIfNeeded()
        // What a download interrupted by a crash staged is never swapped in. (Only the agent
        // clears it: a status reader opening the database must not touch a running download.)
        try await store.clearAllIncoming()
        engine = AgentEngine(
            configuration: configuration, identity: identity, keystore: keystore, store: store, logger: logger, faults: faults,
            keyHistory: try KeyHistoryStore(path: configuration.keyHistoryPath), violationReporter: violationReporter)
    }

    /// The services, in start order; a graceful shutdown stops them in reverse (the consumer
    /// first, the ack publisher last so that owed acks still go out).
    var services: [any Service] {
        let selfHeal: [any Service] = engine.faults.selfHeals ? [SelfHealService(engine: engine)] : []
        return [AckPublisherService(engine: engine), CommandExecutorService(engine: engine)] + selfHeal
            + [CommandConsumerService(engine: engine)]
    }

    /// Runs until SIGTERM/SIGINT (graceful) or cancellation.
    ///
    /// With `lockSignals`, SIGUSR1 locks the agent and SIGUSR2 unlocks it (`LockControlService`).
    /// With `metrics` (from `AgentMetricsExport.bootstrapPrometheus()`) and
    /// `configuration.metricsFile`, the metrics file is kept up to date.
    /// With `tracing` (from `OTLPExporter.bootstrap`), ended spans are exported beside the agent.
    /// With `boundedShutdown` (the agent's process, never an in-process test), graceful shutdown
    /// may take `configuration.shutdownGrace`; past that the process exits (`ShutdownDeadline`).
    /// - Throws: when a service fails for good (e.g. the local database); the process should
    ///   exit and be restarted, and will converge from its inbox and outbox.
    public func run(
        gracefulShutdownSignals: [UnixSignal] = [.sigterm, .sigint], lockSignals: Bool = true,
        metrics: (@Sendable () -> [UInt8])? = nil, boundedShutdown: Bool = false, tracing: OTLPExporter? = nil
    ) async throws {
        engine.metrics.locked(isLocked)
        engine.logger.notice(
            isLocked ? "device agent starting locked" : "device agent starting",
            metadata: [LogKey.userID: "\(userID.uuidString.lowercased())", LogKey.topic: "\(engine.configuration.commandsTopic)"])
        // Finish what the inbox owes before self-healing, so that a command interrupted by a
        // crash is acknowledged for what it did (`applied`), not overtaken by the self-heal.
        do {
            try await engine.processPendingCommands()
        } catch let error as AgentError where error.isTransient {
            engine.logger.warning("pending commands wait for the grant service", metadata: [LogKey.error: "\(error)"])
        }
        var services = lockSignals ? self.services + [LockControlService(engine: engine)] : self.services
        if let metrics, let path = engine.configuration.metricsFile {
            services.insert(MetricsFileService(path: path, interval: engine.configuration.metricsInterval, render: metrics, engine: engine), at: 0)
        }
        // First: stopped last, so the spans of the others' shutdown still go out.
        if let tracing { services.insert(TracingExport(exporter: tracing), at: 0) }
        if boundedShutdown {
            // Last: graceful shutdown reaches it first.
            services.append(ShutdownDeadline(grace: engine.configuration.shutdownGrace, logger: engine.logger))
        }
        let group = ServiceGroup(services: services, gracefulShutdownSignals: gracefulShutdownSignals, logger: engine.logger)
        try await group.run()
        engine.logger.notice("device agent stopped")
    }

    /// Drops the keys: the agent keeps consuming, seals what arrives, and erases on
    /// `secure_deletion`; rotations wait for `unlock()`.
    public func lock() async throws {
        try await engine.lock()
    }

    /// Reads the configured passphrase file or key file again and resumes: sealed commands
    /// run in arrival order and the acks owed for locked erasures are signed and published.
    /// - Throws: as `open` does for a wrong or exposed secret; the agent stays locked.
    public func unlock() async throws {
        try await engine.unlock()
    }

    /// Turns at-rest encryption of the record cache on or off, migrating every cached record
    /// in place in one transaction (see `AtRestLayer`). Needs the agent unlocked.
    /// - Returns: how many records were migrated.
    @discardableResult
    public func setAtRestEncryption(_ enabled: Bool) async throws -> Int {
        let keys = try engine.keyRing.unlocked()
        let migrated = try await engine.work.withLock { try await engine.store.setAtRest(enabled, layer: keys.atRest) }
        engine.logger.notice(
            enabled ? "at-rest encryption on" : "at-rest encryption off", metadata: [LogKey.records: "\(migrated)"])
        return migrated
    }

    /// Writes a key-free backup of the cache (`BackupArchive`) to `path` (0600). Needs the
    /// agent unlocked only when at-rest encryption is on.
    /// - Returns: the archive written.
    @discardableResult
    public func exportBackup(to path: String) async throws -> BackupArchive {
        let archive = try await engine.store.backup(deviceID: deviceID, userID: userID, atRest: engine.keyRing.keys?.atRest)
        try SecureFiles.writeOwnerOnly(try archive.encoded(), to: path)
        return archive
    }

    /// One self-healing pass now (also what the CLI's `sync` does).
    /// The phases of the FMK rotation this agent acked with `ackID` (one of its last 64), once
    /// the ack was handed to the producer; `nil` otherwise (read by the bench's fan-out section).
    public func rotationPhases(ackID: UUID) -> RotationPhases? {
        engine.rotationLog.phases(ackID: ackID)
    }

    public func selfHeal() async throws {
        _ = try await engine.selfHeal()
    }

    /// The cached records of a family member, decrypted in memory (what a device shows).
    /// - Throws: `AgentError.accessRevoked` once the family member was erased.
    public func plaintexts(of familyMemberID: UUID) async throws -> [UUID: [UInt8]] {
        try await engine.plaintexts(of: familyMemberID)
    }

    /// What this device holds (no secrets).
    public func status() async throws -> AgentStatus {
        var status = try await AgentStatus.read(store: engine.store, deviceID: deviceID, userID: userID)
        // Rejections are written in batches (`RejectionCounters`): add those not written yet.
        status.counters.merge(engine.rejectionCounters.unwritten()) { $0 + $1 }
        return status
    }
}
