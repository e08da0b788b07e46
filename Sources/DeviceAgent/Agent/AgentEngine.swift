import Foundation
import Logging
import RescindClient
import RescindCrypto
import RescindKafka
import RescindProtocol

/// The agent's state machine: receives verified commands into the inbox, carries them out
/// (rotate or erase), and heals by comparing versions with the grant service. Services
/// call into it; it owns no task of its own.
final class AgentEngine: Sendable {
    let configuration: AgentConfiguration
    let keystore: Keystore
    let store: AgentStore
    let fetcher: FamilyMemberFetcher
    let signer: AckSigner
    let logger: Logger
    let faults: AgentFaults
    /// Serialises commands and self-healing (each downloads, then writes).
    let work = AsyncLock()
    /// Set when a command lands in the inbox.
    let commandsQueued = WakeSignal()
    /// Set when an ack is owed.
    let acksOwed = WakeSignal()

    init(configuration: AgentConfiguration, keystore: Keystore, store: AgentStore, logger: Logger, faults: AgentFaults) {
        self.configuration = configuration
        self.keystore = keystore
        self.store = store
        let session = UserSession(
            keys: keystore.userKeys, deviceID: keystore.deviceID, deviceKey: keystore.deviceKey,
            baseURL: configuration.grantServiceURL)
        self.fetcher = FamilyMemberFetcher(session: session, storageKey: keystore.storageKey)
        self.signer = AckSigner(deviceID: keystore.deviceID, deviceKey: keystore.deviceKey)
        var logger = logger
        logger[metadataKey: LogKey.device] = "\(keystore.deviceID.text)"
        self.logger = logger
        self.faults = faults
    }

    var deviceID: UUID { keystore.deviceID }

    /// The FMK of an active family member, unwrapped from the cache.
    func fmk(of state: FamilyMemberState) throws -> SecretKey {
        guard state.status == .active, let wrapped = state.wrappedFMK else {
            throw AgentError(.accessRevoked, "no FMK is held for family member \(state.familyMemberID.text)")
        }
        do {
            return try FMKWrapping.unwrapForOwner(
                [UInt8](wrapped), familyMemberID: state.familyMemberID, version: UInt32(state.fmkVersion),
                masterKey: keystore.storageKey)
        } catch {
            throw AgentError(.verificationFailed, "the cached FMK of \(state.familyMemberID.text) does not unwrap")
        }
    }

    /// Decrypts the cached records of a family member (what a device would show).
    func plaintexts(of familyMemberID: UUID) async throws -> [UUID: [UInt8]] {
        guard let state = try await store.familyMember(familyMemberID) else { return [:] }
        let fmk = try fmk(of: state)
        var result: [UUID: [UInt8]] = [:]
        for record in try await store.records(of: familyMemberID) {
            result[record.recordID] = try RecordCipher.open(
                RecordResponse(
                    recordID: record.recordID, familyMemberID: familyMemberID, fmkVersion: record.fmkVersion,
                    nonce: record.nonce, ciphertext: record.ciphertext, tag: record.tag, changeSeq: record.changeSeq),
                fmk: fmk)
        }
        return result
    }
}
