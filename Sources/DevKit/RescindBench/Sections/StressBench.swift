import DeviceAgent
import Foundation
import Logging
import RescindClient
import RescindCrypto

/// The guide's stress case: 5 family members, 10 users (one device agent each), and three
/// revocations per family member started at the same moment — 15 at once. Revocations that
/// lose the race (409) begin again. Then: no lost update (every family member at version 4,
/// every remaining user decrypts every record, every revoked user refused), and every device
/// converges (rotated to version 4, or erased).
enum StressBench {
    static let users = 10
    static let familyMembers = 5
    static let revocationsPerFamilyMember = 3

    static func run(stack: BenchStack, options: BenchOptions, report: BenchReport, logger: Logger) async throws {
        var people: [BenchUser] = []
        for index in 0..<users { people.append(try await stack.user("Stress user \(index)")) }
        var members: [SeededFamilyMember] = []
        for index in 0..<familyMembers {
            let owner = people[index]
            let seeded = try await RecordSeeder.seed(
                stack, owner: owner.session, count: options.smallFamilyMemberRecords, byteCount: options.recordBytes)
            for other in people where other.userID != owner.userID {
                try await owner.session.grant(seeded.familyMemberID, to: other.userID)
            }
            members.append(seeded)
        }
        let fleet = try await AgentFleet.start(
            people.map(\.firstDevice), stack: stack, fetchWaitMilliseconds: options.fetchWaitMilliseconds, logger: logger)
        do {
            // Family member i loses users i+5, i+6, i+7 (mod 10): never its owner.
            let plan = (0..<familyMembers).flatMap { index in
                (0..<revocationsPerFamilyMember).map { offset in (member: index, revoked: (index + 5 + offset) % users) }
            }

            let start = ContinuousClock.now
            let outcomes = try await withThrowingTaskGroup(of: Retries.self) { group in
                for step in plan {
                    let owner = people[step.member]
                    let familyMemberID = members[step.member].familyMemberID
                    let revoked = people[step.revoked].userID
                    group.addTask { try await revokeRetrying(owner: owner, familyMemberID: familyMemberID, revoked: revoked) }
                }
                var total = Retries()
                for try await retries in group {
                    total.conflicts += retries.conflicts
                    total.staleDownloads += retries.staleDownloads
                }
                return total
            }
            let stormSeconds = Timing.seconds(ContinuousClock.now - start)

            // No lost update.
            var problems: [String] = []
            for (index, member) in members.enumerated() {
                let owner = people[index]
                let version = try await owner.session.client.fmkVersion(member.familyMemberID).currentFMKVersion
                if version != 1 + revocationsPerFamilyMember { problems.append("family member \(index) at version \(version)") }
                let revokedHere = Set(plan.filter { $0.member == index }.map { people[$0.revoked].userID })
                for person in people {
                    if revokedHere.contains(person.userID) {
                        if (try? await person.session.currentFMK(member.familyMemberID)) != nil {
                            problems.append("a revoked user can still unwrap family member \(index)'s key")
                        }
                    } else {
                        let records = try await person.session.readRecords(member.familyMemberID)
                        if records.count != member.recordIDs.count { problems.append("user reads \(records.count) records of \(index)") }
                    }
                }
            }
            // Every device converges.
            let expected = Dictionary(uniqueKeysWithValues: people.map { person in
                (person.firstDevice.deviceID, Set(plan.filter { people[$0.revoked].userID == person.userID }.map { members[$0.member].familyMemberID }))
            })
            let convergeStart = ContinuousClock.now
            let converged = try await Timing.wait(timeout: .seconds(60), interval: .milliseconds(20)) {
                for member in fleet.members {
                    let status = try await member.agent.status()
                    let erased = expected[member.identity.deviceID] ?? []
                    for seeded in members {
                        guard let held = status.familyMembers.first(where: { $0.familyMemberID == seeded.familyMemberID }) else { return false }
                        if erased.contains(seeded.familyMemberID) {
                            if held.status == "active" { return false }
                        } else if held.status != "active" || held.fmkVersion != 1 + revocationsPerFamilyMember
                            || held.records != seeded.recordIDs.count
                        {
                            return false
                        }
                    }
                }
                return true
            }
            let convergeSeconds = Timing.seconds(ContinuousClock.now - convergeStart)
            await fleet.stop()

            BenchReport.log(
                "stress: \(plan.count) simultaneous revocations committed in \(Format.duration(stormSeconds)), "
                    + "\(outcomes.conflicts) retries after 409, \(outcomes.staleDownloads) after a stale download; devices converged: \(converged) (+\(Format.duration(convergeSeconds))); "
                    + "problems: \(problems.isEmpty ? "none" : problems.joined(separator: "; "))")
            report.add(
                "stress case: \(familyMembers) family members × \(revocationsPerFamilyMember) simultaneous revocations, \(users) users/agents",
                project: "\(plan.count) committed in \(Format.duration(stormSeconds)); retries: \(outcomes.conflicts) after 409, "
                    + "\(outcomes.staleDownloads) after a stale download")
            report.add(
                "… no lost update / every device converged",
                project: "\(problems.isEmpty ? "yes" : "NO: " + problems.joined(separator: "; ")) / "
                    + (converged ? "yes, \(Format.duration(convergeSeconds)) after the last commit" : "NO (60 s)"))
            if !problems.isEmpty || !converged { throw BenchError("the stress case failed: \(problems)") }
        } catch {
            await fleet.stop()
            throw error
        }
    }

    struct Retries: Sendable {
        /// The service refused a commit or the client saw the version move (409).
        var conflicts = 0
        /// Another revocation committed between this one's key fetch and its record download:
        /// the client then fails to open the re-encrypted records (`authentication_failed`)
        /// and abandons, changing nothing — a lost race surfaced as a crypto error, not a 409.
        var staleDownloads = 0
    }

    /// Revokes, beginning again whenever another revocation of the same family member won
    /// the race. - Returns: the retries it took.
    private static func revokeRetrying(owner: BenchUser, familyMemberID: UUID, revoked: UUID) async throws -> Retries {
        var retries = Retries()
        for _ in 1...50 {
            do {
                _ = try await owner.session.revoke(familyMemberID, user: revoked)
                return retries
            } catch let error as GrantServiceError where error.status == 409 {
                retries.conflicts += 1
            } catch let error as CryptoError where error.code == .authenticationFailed {
                retries.staleDownloads += 1
            }
            try await Task.sleep(for: .milliseconds(Int.random(in: 5...40)))
        }
        throw BenchError("a revocation lost the race 50 times")
    }
}
