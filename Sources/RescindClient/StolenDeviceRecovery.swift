import Foundation
import RescindCrypto
import RescindProtocol

/// The owner's side of the stolen-device scenario (guide, "Stolen device"): revoke the user
/// from every family member I own — each with full re-encryption — and, once the user has
/// rotated their identity keys on a device the thief does not hold — and the owner compared
/// the verification code of the new keys with the user — re-grant them at the new versions
/// to the new keys.
///
/// The work is a plan kept by the caller between runs, so a run that failed half-way (a
/// crash, a lost connection, a user who has not rotated yet) is finished by running it again:
/// each step looks at the service's state before acting, and nothing is done twice.
public struct StolenDeviceRecovery: Codable, Sendable, Equatable {
    public var userID: UUID
    /// When the user lost every device that held their identity key (so they cannot rotate
    /// it), they register a new identity and are re-granted under it instead.
    public var regrantTo: UUID?
    public var reason: String?
    /// The user's identity generation when the recovery began: a re-grant waits for a later one,
    /// so nothing is ever wrapped to keys that sat on the stolen device.
    public var generationAtStart: Int
    /// Family members to take the user out of, and the revocations begun for them.
    public var familyMembers: [UUID]
    public var openRevocations: [UUID: UUID]
    /// Family members whose revocation committed, with the version it moved to.
    public var revoked: [UUID: Int]
    public var regranted: Set<UUID>


    /// A recovery that cannot start as asked (nothing changed).
    public struct Refusal: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    public enum Step: Sendable, Equatable {
        case revoked(UUID, version: Int, records: Int, event: UUID)
        case alreadyRevoked(UUID)
        case regranted(UUID, version: Int, verificationCode: String)
        case waitingForRotation(generation: Int)
        /// The user rotated; their new key is trusted only once the verification code it gives
        /// with mine matches the one their own device shows (`rescind identity code --with me`):
        /// a thief who rotated first with the stolen keys would show another code.
        case confirmNewKeys(generation: Int, verificationCode: String)
    }

    /// Where a recovery stands: what is done, and what is left.
    public var isFinished: Bool { regranted.count == familyMembers.count }
    public var leftToRevoke: [UUID] { familyMembers.filter { revoked[$0] == nil } }
    public var leftToRegrant: [UUID] { familyMembers.filter { !regranted.contains($0) } }

    public init(userID: UUID, regrantTo: UUID? = nil, reason: String?, generationAtStart: Int) {
        self.userID = userID
        self.regrantTo = regrantTo
        self.reason = reason
        self.generationAtStart = generationAtStart
        self.familyMembers = []
        self.openRevocations = [:]
        self.revoked = [:]
        self.regranted = []
    }
}

extension UserSession {
    /// Starts a recovery: the user's current identity generation is the one the thief may hold.
    /// - Parameter regrantTo: a new identity of the same person, when every device holding the
    ///   old identity key was lost (it is re-granted once its verification code is confirmed).
    public func beginStolenDeviceRecovery(
        user userID: UUID, regrantTo: UUID? = nil, reason: String?
    ) async throws -> StolenDeviceRecovery {
        let user = try await client.user(userID)
        if let regrantTo {
            guard regrantTo != userID else { throw StolenDeviceRecovery.Refusal(description: "the new identity must be another user than the stolen one") }
            _ = try await client.user(regrantTo)  // 404 for an unknown user, before anything is revoked
        }
        return StolenDeviceRecovery(userID: userID, regrantTo: regrantTo, reason: reason, generationAtStart: user.identityGeneration)
    }

    /// Advances a recovery as far as it can go now. `save` is called after every change to
    /// the plan (before the next request), so a crash at any point leaves a plan that resumes.
    /// - Returns: what this run did; `.waitingForRotation` when the user has not rotated yet.
    /// - Parameter confirmedCode: the verification code the user's own device showed for their new
    ///   keys; re-grants wait for it (`.confirmNewKeys` tells the code to compare).
    public func advance(
        _ recovery: inout StolenDeviceRecovery, confirmedCode: String? = nil,
        progress: @Sendable (RevocationProgress) -> Void = { _ in }, save: (StolenDeviceRecovery) throws -> Void
    ) async throws -> [StolenDeviceRecovery.Step] {
        var steps: [StolenDeviceRecovery.Step] = []
        // 1. Revocations: begin them all at once (the user loses write access everywhere
        //    before the first commit), or resume those a failed run left.
        if recovery.familyMembers.isEmpty {
            let begun: [RevocationResponse]
            do {
                begun = try await client.beginUserRevocation(
                    recovery.userID, BeginUserRevocationRequest(reason: recovery.reason))
            } catch let error as GrantServiceError where error.code == "not_a_grantee" {
                begun = []
            }
            recovery.familyMembers = begun.map(\.familyMemberID)
            recovery.openRevocations = Dictionary(uniqueKeysWithValues: begun.map { ($0.familyMemberID, $0.revocationID) })
            try save(recovery)
            for revocation in begun {
                try await expect(revocation, of: nil, revoking: recovery.userID)
                let committed = try await complete(revocation, uploadBatchSize: 500, progress: progress)
                recovery.revoked[revocation.familyMemberID] = committed.newFMKVersion
                recovery.openRevocations[revocation.familyMemberID] = nil
                try save(recovery)
                steps.append(
                    .revoked(
                        revocation.familyMemberID, version: committed.newFMKVersion, records: committed.recordsReencrypted,
                        event: committed.eventID))
            }
        } else {
            for familyMemberID in recovery.leftToRevoke {
                if let stale = recovery.openRevocations[familyMemberID] {
                    try? await client.abandonRevocation(stale)  // begun by a run that did not finish
                }
                do {
                    let revocation = try await client.beginRevocation(
                        familyMemberID, BeginRevocationRequest(revokedUserID: recovery.userID, reason: recovery.reason))
                    try await expect(revocation, of: familyMemberID, revoking: recovery.userID)
                    recovery.openRevocations[familyMemberID] = revocation.revocationID
                    try save(recovery)
                    let committed = try await complete(revocation, uploadBatchSize: 500, progress: progress)
                    recovery.revoked[familyMemberID] = committed.newFMKVersion
                    steps.append(
                        .revoked(
                            familyMemberID, version: committed.newFMKVersion, records: committed.recordsReencrypted,
                            event: committed.eventID))
                } catch let error as GrantServiceError where error.code == "not_a_grantee" {
                    // The failed run's commit went through before it could say so.
                    recovery.revoked[familyMemberID] = try await client.fmkVersion(familyMemberID).currentFMKVersion
                    steps.append(.alreadyRevoked(familyMemberID))
                }
                recovery.openRevocations[familyMemberID] = nil
                try save(recovery)
            }
        }

        // 2. Re-grants, only to keys the stolen device never held: the user's rotated keys, or
        //    the new identity they registered.
        let target = recovery.regrantTo ?? recovery.userID
        let user = try await client.user(target)
        guard !recovery.leftToRegrant.isEmpty else { return steps }
        guard recovery.regrantTo != nil || user.identityGeneration > recovery.generationAtStart else {
            steps.append(.waitingForRotation(generation: user.identityGeneration))
            return steps
        }
        let code = try keys.agreementKey.verificationCode(
            with: try X25519.PublicKey(rawRepresentation: [UInt8](user.agreementPublicKey)))
        guard confirmedCode?.uppercased() == code else {
            steps.append(.confirmNewKeys(generation: user.identityGeneration, verificationCode: code))
            return steps
        }
        // The codes matched: these keys are the user's own, compared out of band. The re-grants
        // below wrap to them only (`verifiedRecipient`), whatever the service shows meanwhile.
        try pins.pin(target, .init(identityPublicKey: user.identityPublicKey, agreementPublicKey: user.agreementPublicKey, source: .comparedCode))
        for familyMemberID in recovery.leftToRegrant {
            do {
                let code = try await grant(familyMemberID, to: target)
                steps.append(.regranted(familyMemberID, version: try await client.fmkVersion(familyMemberID).currentFMKVersion, verificationCode: code))
            } catch let error as GrantServiceError where error.code == "already_granted" {
                // Granted by a run that did not live to record it.
            }
            recovery.regranted.insert(familyMemberID)
            try save(recovery)
        }
        return steps
    }
}
