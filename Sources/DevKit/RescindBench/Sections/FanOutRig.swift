import DeviceAgent
import Foundation
import Logging
import RescindClient
import RescindProtocol

/// The fan-out's set-up, ready to revoke again and again: an owner with `agents` devices' worth
/// of grantees (the rotating devices spread over the owner and up to four other grantees, plus
/// the revoked user's one device, which erases), `familyMembers` family members each with its
/// records seeded and shared with all of them, and every agent enrolled and synced. Each
/// `revoke()` is one measured revocation of the revoked user from the next family member, the
/// same fan-out each time. With one family member the revoked user is granted it again and
/// their device re-synced after each revocation; with more, `restore()` does that for all of
/// them at once, outside the revocations measured.
struct FanOutRig: Sendable {
    let owner: BenchUser
    let revoked: BenchUser
    let revokedAgent: AgentFleet.Member?
    let familyMemberIDs: [UUID]
    /// How many of `familyMemberIDs` the revoked user has lost since the last `restore()`.
    let revokedCount = Locked(0)
    let devices: Int
    let stack: BenchStack
    let ledger: EventLedger
    let fleet: AgentFleet
    let options: BenchOptions

    static func prepare(
        agents count: Int, familyMembers: Int = 1, stack: BenchStack, ledger: EventLedger, options: BenchOptions, logger: Logger
    ) async throws -> FanOutRig {
        // With a single agent, the revoked user has no device.
        let rotating = count == 1 ? 1 : count - 1
        let holders = min(5, rotating)
        let owner = try await stack.user("Fan-out owner \(count)")
        var users = [owner]
        for index in 1..<holders { users.append(try await stack.user("Fan-out grantee \(count)-\(index)")) }
        let revoked = try await stack.user("Fan-out revoked \(count)")
        var identities: [AgentIdentity] = []
        for index in 0..<rotating {
            let user = users[index % holders]
            identities.append(index < holders ? user.firstDevice : try await user.addDevice("agent \(index)"))
        }
        if count == 1 {
            try await revoked.retireFirstDevice()
        } else {
            identities.append(revoked.firstDevice)
        }

        var familyMemberIDs: [UUID] = []
        for _ in 0..<familyMembers {
            let seeded = try await RecordSeeder.seed(stack, owner: owner.session, count: options.recordsPerAgent, byteCount: options.recordBytes)
            for user in users.dropFirst() + [revoked] { try await owner.session.grant(seeded.familyMemberID, to: user.userID) }
            familyMemberIDs.append(seeded.familyMemberID)
        }
        let (fleet, startup) = try await Timing.measure {
            try await AgentFleet.start(
                identities, stack: stack, fetchWaitMilliseconds: options.fetchWaitMilliseconds,
                receiptHoldMilliseconds: options.receiptHoldMilliseconds, logger: logger)
        }
        BenchReport.log(
            "\(count) agents: enrolled and synced \(familyMembers) × \(options.recordsPerAgent) records each in \(Format.duration(startup))")
        do {
            for member in fleet.members {
                let held = try await member.agent.status().familyMembers.filter { familyMemberIDs.contains($0.familyMemberID) }
                guard held.count == familyMembers, held.allSatisfy({ $0.records == options.recordsPerAgent }) else {
                    throw BenchError("agent \(member.identity.deviceID) holds \(held.map(\.records)) records after its first sync")
                }
            }
        } catch {
            await fleet.stop()
            throw error
        }
        return FanOutRig(
            owner: owner, revoked: revoked, revokedAgent: fleet.member(revoked.firstDevice.deviceID),
            familyMemberIDs: familyMemberIDs, devices: identities.count, stack: stack, ledger: ledger, fleet: fleet,
            options: options)
    }

    func stop() async { await fleet.stop() }

    /// Grants the revoked user again every family member they lost, and re-syncs their device.
    func restore() async throws {
        for familyMemberID in familyMemberIDs.prefix(revokedCount.current) {
            try await owner.session.grant(familyMemberID, to: revoked.userID)
        }
        try await revokedAgent?.agent.selfHeal()
        revokedCount.withLock { $0 = 0 }
    }

    /// Revokes the next family member, waits for every ack (and the audit notice); with one
    /// family member, then restores it for the next round. `nil` when some device did not ack in time.
    func revoke() async throws -> FanOutBench.Sample? {
        guard revokedCount.current < familyMemberIDs.count else {
            throw BenchError("the revoked user has lost all \(familyMemberIDs.count) family members: restore() first")
        }
        let familyMemberID = familyMemberIDs[revokedCount.current]
        let marks = Locked<[RevocationProgress.Phase: Date]>([:])
        // CPU counters when the commit request goes out: the window is the fan-out's, not the
        // owner's download, re-encryption and upload before it.
        let atCommit = Locked<FanOutBench.CPUCounters?>(nil)
        let stack = stack
        let (committed, revocation) = try await Timing.measure {
            try await owner.session.revoke(familyMemberID, user: revoked.userID, uploadBatchSize: options.uploadBatch) { progress in
                let now = Date()
                if progress.phase == .committing { atCommit.withLock { $0 = $0 ?? FanOutBench.CPUCounters(stack: stack) } }
                marks.withLock { if $0[progress.phase] == nil { $0[progress.phase] = now } }
            }
        }
        guard committed.devicesNotified == devices else {
            throw BenchError("the commit notified \(committed.devicesNotified) devices, expected \(devices)")
        }
        let acks = await ledger.waitForAcks(committed.eventID, count: devices, timeout: .seconds(60))
        let used = atCommit.current.map { FanOutBench.CPUCounters(stack: stack).since($0) } ?? FanOutBench.CPUCounters()
        _ = await Timing.wait(timeout: .seconds(5)) { ledger.completion(of: committed.eventID) != nil }

        revokedCount.withLock { $0 += 1 }
        if familyMemberIDs.count == 1 {
            try await restore()
            try? await Task.sleep(for: .milliseconds(100))
        }

        guard acks.count == devices, let last = acks.values.max(by: { $0.publishedAt < $1.publishedAt }),
            let sent = marks.current[.committing], let answered = marks.current[.committed]
        else { return nil }
        for ack in acks.values where ack.ack.outcome == .failed {
            throw BenchError("device \(ack.ack.deviceID) failed its command: \(ack.ack.error ?? "")")
        }
        let commandAt = ledger.commands(of: committed.eventID)[last.ack.deviceID] ?? sent
        let work = Double(last.ack.durationMs) / 1000
        let started = last.ack.ackedAt.addingTimeInterval(-work)
        let completion = ledger.completion(of: committed.eventID)
        return FanOutBench.Sample(
            revocation: revocation,
            total: last.publishedAt.timeIntervalSince(sent),
            commitCall: answered.timeIntervalSince(sent),
            commitToBroker: commandAt.timeIntervalSince(sent),
            brokerToAgent: started.timeIntervalSince(commandAt),
            agentWork: work,
            ackToBroker: last.publishedAt.timeIntervalSince(last.ack.ackedAt),
            lastAckToAudit: completion.map { $0.publishedAt.timeIntervalSince(last.publishedAt) },
            auditCommitToLastAck: completion?.commitToLastAckMs.map { Double($0) / 1000 },
            cpu: used,
            phases: fleet.member(last.ack.deviceID)?.agent.rotationPhases(ackID: last.ack.ackID))
    }
}
