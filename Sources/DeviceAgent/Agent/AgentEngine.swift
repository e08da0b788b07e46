import Foundation
import Logging
import RescindClient
import RescindCrypto
import RescindObservability
import RescindProtocol
import Synchronization

/// The agent's state machine: receives verified commands into the inbox, carries them out
/// (rotate or erase), and heals by comparing versions with the grant service. Services
/// call into it; it owns no task of its own.
final class AgentEngine: Sendable {
    let configuration: AgentConfiguration
    /// Who this device is and its inbox public key: known while locked.
    let identity: KeystoreIdentity
    /// The unlocked keys, absent while locked.
    let keyRing: KeyRing
    let store: AgentStore
    let logger: Logger
    let faults: AgentFaults
    /// Where the engine's metrics are recorded (`AgentMetrics.process` outside tests of the metrics themselves).
    let metrics: AgentMetrics
    /// The verified key histories (in the data directory), checked before any key is used.
    let keyHistory: KeyHistoryStore
    /// Where the key-history verifier reports what it refused: by default the agent's own
    /// `AgentViolationReporter` (signed onto `device_acks` through the ack outbox).
    let violationReporter: any KeyChainViolationReporting
    /// Serialises commands, self-healing, lock and unlock (each downloads, then writes).
    let work = AsyncLock()
    /// Serialises the receipt of a command with the switch between locked and unlocked, so
    /// a command is either sealed or stored in the clear, never lost in between.
    let mode = AsyncLock()
    /// Set when a command lands in the inbox.
    let commandsQueued = WakeSignal()
    /// Set when an ack is owed.
    let acksOwed = WakeSignal()
    /// The recent rotations' phases (`RotationPhases`), finished by the ack publisher.
    let rotationLog = RotationLog()
    /// Signs receipts (`delivered`, `not_now`) with the receipt key, locked or not; `nil` while
    /// this device has none (a locked agent whose data directory never held one).
    private let receiptKey: Mutex<ReceiptSigner?>
    /// Rejected `device_commands` messages, counted in memory and written in batches.
    let rejectionCounters = RejectionCounters()

    /// An engine that starts locked when `keystore` is `nil`.
    init(
        configuration: AgentConfiguration, identity: KeystoreIdentity, keystore: Keystore?, store: AgentStore, logger: Logger,
        faults: AgentFaults, metrics: AgentMetrics = .process, keyHistory: KeyHistoryStore = KeyHistoryStore(),
        violationReporter: (any KeyChainViolationReporting)? = nil
    ) {
        let bound = BoundViolationReporter()
        self.keyHistory = keyHistory
        self.violationReporter = bound
        self.configuration = configuration
        self.identity = identity
        self.keyRing = KeyRing(keystore.map {
            UnlockedKeys(
                $0, grantServiceURL: configuration.grantServiceURL, tls: configuration.tls, keyHistory: keyHistory,
                violationReporter: bound)
        })
        self.store = store
        receiptKey = Mutex(Self.receiptSigner(configuration: configuration, identity: identity, keystore: keystore, logger: logger))
        var logger = logger
        logger[metadataKey: LogKey.deviceID] = "\(identity.deviceID.text)"
        self.logger = logger
        self.faults = faults
        self.metrics = metrics
        bound.bind(violationReporter ?? AgentViolationReporter(engine: self))
    }

    convenience init(configuration: AgentConfiguration, keystore: Keystore, store: AgentStore, logger: Logger, faults: AgentFaults) {
        self.init(
            configuration: configuration, identity: KeystoreIdentity(keystore), keystore: keystore, store: store, logger: logger,
            faults: faults)
    }

    var deviceID: UUID { identity.deviceID }

    /// The receipt signer, when this device has a receipt key.
    var receipts: ReceiptSigner? { receiptKey.withLock { $0 } }

    /// Makes sure the receipt key is certified by `keystore`'s device key (at unlock).
    func certifyReceiptKey(_ keystore: Keystore) {
        let signer = Self.receiptSigner(configuration: configuration, identity: identity, keystore: keystore, logger: logger)
        receiptKey.withLock { $0 = signer ?? $0 }
    }

    /// Unlocked: the receipt key in the data directory, made and certified now if it is missing
    /// or not certified by this device key. Locked: the one there, if any. A failure only costs
    /// the receipts (logged), never a command.
    private static func receiptSigner(
        configuration: AgentConfiguration, identity: KeystoreIdentity, keystore: Keystore?, logger: Logger
    ) -> ReceiptSigner? {
        guard let keystore else {
            let signer = ReceiptKeyFile.load(dataDirectory: configuration.dataDirectory, deviceID: identity.deviceID)
            if signer == nil { logger.warning("no receipt key in the data directory: no receipts until the first unlock") }
            return signer
        }
        do {
            return try ReceiptKeyFile.ensure(
                dataDirectory: configuration.dataDirectory, deviceID: keystore.deviceID, deviceKey: keystore.deviceKey)
        } catch {
            logger.warning("cannot keep a receipt key: no receipts", metadata: [LogKey.error: "\(error)"])
            return nil
        }
    }

    /// The unlocked keystore; `AgentError.locked` while locked.
    var keystore: Keystore {
        get throws { try keyRing.unlocked().keystore }
    }

    /// The FMK of an active family member, unwrapped from the cache.
    func fmk(of state: FamilyMemberState) throws -> SecretKey {
        guard state.status == .active, let wrapped = state.wrappedFMK else {
            throw AgentError(.accessRevoked, "no FMK is held for family member \(state.familyMemberID.text)")
        }
        let storageKey = try keystore.storageKey
        do {
            return try FMKWrapping.unwrapForOwner(
                [UInt8](wrapped), familyMemberID: state.familyMemberID, version: UInt32(state.fmkVersion),
                masterKey: storageKey)
        } catch {
            throw AgentError(.verificationFailed, "the cached FMK of \(state.familyMemberID.text) does not unwrap")
        }
    }

    /// Decrypts the cached records of a family member (what a device would show).
    func plaintexts(of familyMemberID: UUID) async throws -> [UUID: [UInt8]] {
        guard let state = try await store.familyMember(familyMemberID) else { return [:] }
        let fmk = try fmk(of: state)
        var result: [UUID: [UInt8]] = [:]
        for record in try await store.records(of: familyMemberID, atRest: keyRing.keys?.atRest) {
            result[record.recordID] = try RecordCipher.open(
                RecordResponse(
                    recordID: record.recordID, familyMemberID: familyMemberID, fmkVersion: record.fmkVersion,
                    nonce: record.nonce, ciphertext: record.ciphertext, tag: record.tag, changeSeq: record.changeSeq),
                fmk: fmk)
        }
        return result
    }
}

extension AgentEngine {
    /// Counts a rejected `device_commands` message (`rejected_<reason>`), writing the batch when due.
    func countRejection(_ reason: String) async throws {
        if rejectionCounters.add("rejected_\(reason)") { try await writeRejectionCounters() }
    }

    /// Writes the rejection counts not written yet.
    func writeRejectionCounters() async throws {
        let counts = rejectionCounters.take()
        do {
            try await store.increment(counts)
        } catch {
            rejectionCounters.restore(counts)
            throw error
        }
    }
}
