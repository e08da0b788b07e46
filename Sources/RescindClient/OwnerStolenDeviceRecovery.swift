import Foundation
import RescindCrypto
import RescindProtocol

/// The owner's own device was stolen: it held every FMK of the family members they own and their
/// identity key. Revoking nobody, the recovery retires the device, waits until the owner's identity
/// keys were rotated after the retirement (`rescind identity rotate` on a device they still have),
/// then rotates every family member they own: a new FMK for exactly the users who hold the current
/// one, every record re-encrypted (the revocation's begin → batched upload → atomic commit, with its
/// no-lost-edit rule), a `rotate` key statement signed by the new identity key, and every holder's
/// agent devices told to rotate.
///
/// Like `StolenDeviceRecovery`, the work is a plan the caller keeps between runs: a run that failed
/// half-way is finished by running it again, and nothing is rotated twice.
public struct OwnerStolenDeviceRecovery: Codable, Sendable, Equatable {
    public var deviceID: UUID
    public var reason: String?
    /// The family members I own, each with the FMK version it was at when the plan was made (the
    /// stolen device could hold every version up to it): a version above it is one the device never had.
    public var familyMembers: [UUID: Int]
    /// Rotations begun and not yet known to have committed.
    public var openRotations: [UUID: UUID]
    /// Family members rotated, with the version they moved to.
    public var rotated: [UUID: Int]


    public init(deviceID: UUID, reason: String?) {
        self.deviceID = deviceID
        self.reason = reason
        self.familyMembers = [:]
        self.openRotations = [:]
        self.rotated = [:]
    }

    /// A recovery that cannot go on as asked (nothing changed by the step that refused).
    public struct Refusal: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    public enum Step: Sendable, Equatable {
        case retired(UUID)
        /// The identity keys in use are still ones the stolen device may hold.
        case waitingForIdentityRotation
        case rotated(UUID, version: Int, records: Int, event: UUID)
        /// Moved past the plan's version already (a failed run's commit, or a revocation since).
        case alreadyRotated(UUID, version: Int)
    }

    public var planned: Bool { !familyMembers.isEmpty }
    public var leftToRotate: [UUID] { familyMembers.keys.filter { rotated[$0] == nil }.sorted { $0.uuidString < $1.uuidString } }
    public var isFinished: Bool { planned && leftToRotate.isEmpty }
}

extension UserSession {
    /// Rotates one family member I own to a new FMK, revoking nobody: every record re-encrypted and
    /// uploaded in batches, the new FMK re-wrapped for every holder, one atomic commit with a
    /// `rotate` key statement; every holder's agent devices are told to rotate. Run it with identity
    /// keys the stolen device does not hold (after `identity rotate`), or the thief can unwrap my copy.
    /// - Throws: as `revoke` (409 `version_conflict` if another change committed first; nothing changed).
    public func rotate(
        _ familyMemberID: UUID, reason: String? = nil, uploadBatchSize: Int = 500,
        progress: @Sendable (RevocationProgress) -> Void = { _ in }
    ) async throws -> RevocationCommitted {
        let rotation = try await client.beginRotation(familyMemberID, BeginRotationRequest(reason: reason))
        try await expect(rotation, of: familyMemberID, revoking: nil)
        return try await complete(rotation, uploadBatchSize: uploadBatchSize, progress: progress)
    }

    /// Advances an owner's stolen-device recovery as far as it can go now. `save` is called after
    /// every change to the plan (before the next request), so a crash at any point leaves a plan
    /// that resumes.
    /// - Throws: `Refusal` when the device is not mine, or when my registered identity key is not
    ///   the one this session holds (someone else — the thief? — rotated it).
    public func advance(
        _ recovery: inout OwnerStolenDeviceRecovery, uploadBatchSize: Int = 500,
        progress: @Sendable (RevocationProgress) -> Void = { _ in }, save: (OwnerStolenDeviceRecovery) throws -> Void
    ) async throws -> [OwnerStolenDeviceRecovery.Step] {
        var steps: [OwnerStolenDeviceRecovery.Step] = []
        // 1. The device: retired first (its tokens die at once), if it is not yet.
        guard var device = try await client.devices().first(where: { $0.deviceID == recovery.deviceID }) else {
            throw OwnerStolenDeviceRecovery.Refusal(description: "device \(recovery.deviceID.uuidString.lowercased()) is not one of yours")
        }
        if device.retiredAt == nil {
            try await client.retireDevice(recovery.deviceID)
            steps.append(.retired(recovery.deviceID))
            device = try await client.devices().first(where: { $0.deviceID == recovery.deviceID }) ?? device
        }
        guard let retiredAt = device.retiredAt else {
            throw OwnerStolenDeviceRecovery.Refusal(description: "the service did not retire the device")
        }
        // 2. Keys the device never held: my registered identity must be this session's, rotated after
        //    the retirement (a retired device receives nothing, so it cannot hold those keys).
        let me = try await client.user(keys.userID)
        guard me.identityPublicKey == Data(keys.identityKey.publicKey.rawRepresentation) else {
            throw OwnerStolenDeviceRecovery.Refusal(
                description: "your registered identity key is not the one this profile holds: it was rotated elsewhere "
                    + "(by another device of yours, or by the thief); use the profile holding your current keys")
        }
        let latest = try await client.identityRotations(of: keys.userID).max { $0.statement.generation < $1.statement.generation }
        guard let latest, latest.statement.identityPublicKey == me.identityPublicKey, latest.statement.issuedAt > retiredAt else {
            return steps + [.waitingForIdentityRotation]
        }
        // 3. The plan: every family member I own, at the version the device could hold.
        if !recovery.planned {
            for member in try await client.familyMembers() where member.ownerUserID == keys.userID {
                recovery.familyMembers[member.familyMemberID] = member.currentFMKVersion
            }
            try save(recovery)
        }
        // 4. Rotate each, resuming what a failed run left.
        for familyMemberID in recovery.leftToRotate {
            if let stale = recovery.openRotations[familyMemberID] {
                try? await client.abandonRevocation(stale)  // begun by a run that did not finish
                recovery.openRotations[familyMemberID] = nil
            }
            let current = try await client.fmkVersion(familyMemberID).currentFMKVersion
            if current > recovery.familyMembers[familyMemberID] ?? current {
                // A failed run's commit went through before it could say so, or a revocation since
                // moved it on: either way an FMK the stolen device never held.
                recovery.rotated[familyMemberID] = current
                try save(recovery)
                steps.append(.alreadyRotated(familyMemberID, version: current))
                continue
            }
            let rotation = try await client.beginRotation(familyMemberID, BeginRotationRequest(reason: recovery.reason))
            try await expect(rotation, of: familyMemberID, revoking: nil)
            recovery.openRotations[familyMemberID] = rotation.revocationID
            try save(recovery)
            let committed = try await complete(rotation, uploadBatchSize: uploadBatchSize, progress: progress)
            recovery.rotated[familyMemberID] = committed.newFMKVersion
            recovery.openRotations[familyMemberID] = nil
            try save(recovery)
            steps.append(
                .rotated(familyMemberID, version: committed.newFMKVersion, records: committed.recordsReencrypted, event: committed.eventID))
        }
        return steps
    }
}
