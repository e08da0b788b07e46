import Foundation
import Logging
import RescindClient
import RescindObservability
import RescindProtocol

extension AgentEngine {
    /// What one self-healing pass changed.
    struct HealReport: Sendable, Equatable {
        var rotated: [UUID] = []
        var erased: [UUID] = []
        var synced: [UUID] = []
        var refused: [UUID] = []
    }

    /// Compares every held FMK version with the grant service and converges without any
    /// command: a newer version → rotate; 403 → erase; the same version → fetch record
    /// changes since the cursor; newly accessible family members → download. This is what
    /// heals a device that was offline for longer than the commands topic keeps messages; the
    /// commands it missed are then fetched from the grant service and answered (`healed`).
    /// A locked agent cannot authenticate to the grant service: the pass is skipped (an
    /// empty report) and runs again after the unlock.
    /// - Throws: a transient `AgentError` when the grant service cannot be reached (retry
    ///   later); per-family-member refusals are logged, counted and skipped.
    func selfHeal() async throws -> HealReport {
        try await work.withLock {
            var report = HealReport()
            guard let fetcher = keyRing.keys?.fetcher else {
                logger.debug("self-heal skipped while locked")
                return report
            }
            let started = ContinuousClock.now
            let accessible = try await fetcher.accessibleFamilyMembers()
            let known = try await store.familyMembers()
            for state in known where state.status == .active {
                try await heal(state, fetcher: fetcher, report: &report)
            }
            let held = Set(known.filter { $0.status == .active }.map(\.familyMemberID))
            for member in accessible where !held.contains(member.familyMemberID) {
                let previous = known.first { $0.familyMemberID == member.familyMemberID }
                try await rotate(
                    member.familyMemberID, minimum: member.currentFMKVersion, floor: previous?.versionFloor ?? 0,
                    previous: 0, fetcher: fetcher, report: &report)
            }
            // After healing, so that a command missed on the topic finds the device already past it.
            _ = try await fetchMissedCommands(fetcher)
            if report != HealReport() {
                logger.notice(
                    "self-heal pass changed the cache",
                    metadata: [
                        LogKey.rotated: "\(report.rotated.count)", LogKey.erased: "\(report.erased.count)",
                        LogKey.synced: "\(report.synced.count)", LogKey.refused: "\(report.refused.count)",
                        LogKey.durationMs: "\((ContinuousClock.now - started).wholeMilliseconds)",
                    ])
            }
            return report
        }
    }

    private func heal(_ state: FamilyMemberState, fetcher: FamilyMemberFetcher, report: inout HealReport) async throws {
        let remote: Int
        do {
            remote = try await fetcher.currentVersion(state.familyMemberID)
        } catch let error as AgentError where error.code == .accessRevoked {
            guard try await fetcher.erasureIsSigned(state.familyMemberID, heldVersion: state.fmkVersion) else {
                await fetcher.reportUnsignedErasure(state.familyMemberID, heldVersion: state.fmkVersion)
                return try await refuse(
                    state.familyMemberID, "unsigned_erasure: a 403 without an owner statement excluding this user; the copy is kept",
                    report: &report)
            }
            let started = ContinuousClock.now
            let effect = try await store.apply(.erase(state.familyMemberID, floor: state.versionFloor))
            try await store.increment("self_heal_erasures")
            metrics.selfHeal("erased")
            report.erased.append(state.familyMemberID)
            logger.notice(
                "self-heal: access revoked (403); cryptographically erased cached records and destroyed the FMK",
                metadata: [
                    LogKey.familyMemberID: "\(state.familyMemberID.text)", LogKey.records: "\(effect.recordsProcessed)",
                    LogKey.previousFMKVersion: "\(state.fmkVersion)", LogKey.source: "self_heal",
                    LogKey.durationMs: "\((ContinuousClock.now - started).wholeMilliseconds)",
                ])
            return
        }
        if remote > state.fmkVersion {
            try await rotate(
                state.familyMemberID, minimum: remote, floor: state.versionFloor, previous: state.fmkVersion, fetcher: fetcher,
                report: &report)
        } else if remote < state.versionFloor {
            // An old version served as current: the owner's history this device verified is newer.
            await fetcher.report(
                .staleVersion, state.familyMemberID, offeredVersion: remote,
                "the grant service reports FMK v\(remote) as current; this device verified v\(state.versionFloor)")
            try await refuse(state.familyMemberID, "the grant service reports FMK v\(remote) below v\(state.versionFloor) already seen", report: &report)
        } else {
            do {
                guard let changes = try await fetcher.incremental(state, fmk: try fmk(of: state)) else {
                    // The version moved while we looked: rotate now rather than wait a period.
                    return try await rotate(
                        state.familyMemberID, minimum: state.fmkVersion + 1, floor: state.versionFloor,
                        previous: state.fmkVersion, fetcher: fetcher, report: &report)
                }
                let effect = try await store.apply(.incremental(changes))
                if effect.changed { report.synced.append(state.familyMemberID) }
            } catch let error as AgentError where !error.isTransient && !error.isStorage {
                try await refuse(state.familyMemberID, error.message, report: &report)
            }
        }
    }

    private func rotate(
        _ id: UUID, minimum: Int, floor: Int, previous: Int, fetcher: FamilyMemberFetcher, report: inout HealReport
    ) async throws {
        let started = ContinuousClock.now
        do {
            let result = try await fetcher.rotation(id, minimum: minimum, floor: floor, store: store)
            let effect = try await store.apply(.rotate(result))
            guard effect.changed else { return }
            try await store.increment("self_heal_rotations")
            metrics.selfHeal("rotated")
            report.rotated.append(id)
            logger.notice(
                previous == 0 ? "downloaded family member into the cache" : "self-heal: rotated FMK and re-keyed the cache",
                metadata: [
                    LogKey.familyMemberID: "\(id.text)", LogKey.fmkVersion: "\(effect.fmkVersion)",
                    LogKey.previousFMKVersion: "\(previous)", LogKey.records: "\(effect.recordsProcessed)",
                    LogKey.source: "self_heal", LogKey.durationMs: "\((ContinuousClock.now - started).wholeMilliseconds)",
                ])
        } catch let error as AgentError where error.code == .accessRevoked && previous > 0 {
            guard try await fetcher.erasureIsSigned(id, heldVersion: previous) else {
                await fetcher.reportUnsignedErasure(id, heldVersion: previous)
                return try await refuse(
                    id, "unsigned_erasure: a 403 without an owner statement excluding this user; the copy is kept", report: &report)
            }
            let effect = try await store.apply(.erase(id, floor: floor))
            metrics.selfHeal("erased")
            report.erased.append(id)
            logger.notice(
                "self-heal: access revoked (403); cryptographically erased cached records and destroyed the FMK",
                metadata: [LogKey.familyMemberID: "\(id.text)", LogKey.records: "\(effect.recordsProcessed)", LogKey.source: "self_heal"])
        } catch let error as AgentError where error.code == .accessRevoked {
            return  // lost access between listing and fetching; nothing was held
        } catch let error as AgentError where !error.isTransient && !error.isStorage {
            try await refuse(id, error.message, report: &report)
        }
    }

    private func refuse(_ id: UUID, _ reason: String, report: inout HealReport) async throws {
        try await store.increment("self_heal_refusals")
        metrics.selfHeal("refused")
        report.refused.append(id)
        logger.error("self-heal refused a change", metadata: [LogKey.familyMemberID: "\(id.text)", LogKey.reason: "\(reason)"])
    }
}
