import DeviceAgent
import Foundation
import Logging
import RescindClient
import RescindCrypto
import RescindKafka
import RescindPostgres
import RescindProtocol

/// One invariant checked at the end of a chaos run, with its count.
struct ChaosInvariant: Sendable, Codable {
    var name: String
    var holds: Bool
    /// What was counted, e.g. "412 rows, 0 lost, 3 duplicate deliveries".
    var detail: String
    var counts: [String: Int]
}

/// What the grant service's database says now: each family member's version, holders and records.
struct ServerState: Sendable {
    var versions: [UUID: Int] = [:]
    var holders: [UUID: Set<UUID>] = [:]
    var records: [UUID: Int] = [:]
    /// The highest record change sequence per family member: a device holding it has every edit.
    var latestChange: [UUID: Int64] = [:]

    static func read(_ stack: ChaosStack) async throws -> ServerState {
        try await stack.withConnection(schema: ChaosStack.grantSchema) { connection in
            var state = ServerState()
            for row in try await connection.query("SELECT family_member_id, current_fmk_version FROM family_members") {
                let (id, version) = try row.decode(UUID.self, Int.self)
                state.versions[id] = version
            }
            for row in try await connection.query("SELECT family_member_id, grantee_user_id FROM access_grants WHERE revoked_at IS NULL") {
                let (id, user) = try row.decode(UUID.self, UUID.self)
                state.holders[id, default: []].insert(user)
            }
            for row in try await connection.query(
                "SELECT family_member_id, count(*), max(change_seq) FROM records GROUP BY family_member_id")
            {
                let (id, count, latest) = try row.decode(UUID.self, Int.self, Int64.self)
                state.records[id] = count
                state.latestChange[id] = latest
            }
            return state
        }
    }
}

/// The end-of-run checks of a chaos run.
struct ChaosInvariants: Sendable {
    let stack: ChaosStack
    let workload: ChaosWorkload

    // MARK: Convergence

    /// What is not converged yet (empty once everything is): outbox rows unsent, revocations
    /// not completed, agents not at the server's state, acks or commands owed.
    func unconverged() async -> [String] {
        var waiting: [String] = []
        do {
            let unsent = try await stack.count(schema: ChaosStack.grantSchema, "SELECT count(*) FROM outbox WHERE sent_at IS NULL")
            if unsent > 0 { waiting.append("\(unsent) grant outbox rows unsent") }
            let events = try await stack.count(schema: ChaosStack.grantSchema, "SELECT count(*) FROM revocation_events")
            let completed = try await stack.count(
                schema: ChaosStack.auditSchema, "SELECT count(*) FROM revocations WHERE completed_at IS NOT NULL")
            if completed < events {
                waiting.append("\(events - completed) of \(events) revocations not completed")
                let open = try await stack.withConnection(schema: ChaosStack.auditSchema) { connection in
                    try await connection.query(
                        """
                        SELECT device_id, action || ':' || state, count(*) FROM revocation_devices
                        WHERE state NOT IN ('applied', 'already_applied', 'healed') GROUP BY 1, 2 ORDER BY 1, 2
                        """
                    ).map { try $0.decode(UUID.self, String.self, Int.self) }
                }
                for (device, state, count) in open {
                    let name = workload.agents.first { $0.deviceID == device }?.name ?? device.uuidString.prefix(8).lowercased()
                    waiting.append("\(name) \(state) ×\(count)")
                }
            }
            let notifications = try await stack.count(
                schema: ChaosStack.auditSchema, "SELECT count(*) FROM notification_outbox WHERE sent_at IS NULL")
            if notifications > 0 { waiting.append("\(notifications) notifications unsent") }
            let state = try await ServerState.read(stack)
            for agent in workload.agents {
                let problems = try await agentDifferences(agent, state: state)
                if !problems.isEmpty { waiting.append("\(agent.name): \(problems.joined(separator: ", "))") }
            }
        } catch {
            waiting.append("cannot read: \(error)")
        }
        return waiting
    }

    /// How an agent's status differs from what the server holds for its user.
    func agentDifferences(_ agent: ChaosAgent, state: ServerState) async throws -> [String] {
        let status = try await AgentStatus.read(configuration: try agent.configuration)
        let userID = workload.users[agent.user].userID
        var problems: [String] = []
        if status.pendingCommands > 0 { problems.append("\(status.pendingCommands) commands pending") }
        if status.owedAcks > 0 { problems.append("\(status.owedAcks) acks owed") }
        for (member, version) in state.versions {
            let local = status.familyMembers.first { $0.familyMemberID == member }
            if state.holders[member]?.contains(userID) == true {
                // Counts alone miss an edit that has not reached the device yet: the latest change must match too.
                let records = state.records[member, default: 0]
                let latest = state.latestChange[member, default: 0]
                guard let local, local.status == "active", local.fmkVersion == version, local.records == records,
                    local.latestChange == latest
                else {
                    problems.append(
                        "member \(member.uuidString.prefix(8)) \(local.map { "\($0.status) v\($0.fmkVersion) \($0.records) records to change \($0.latestChange)" } ?? "missing"), expected v\(version) \(records) records to change \(latest)"
                    )
                    continue
                }
            } else if let local, local.status == "active" {
                problems.append("member \(member.uuidString.prefix(8)) still \(local.status) v\(local.fmkVersion) with \(local.records) records, expected erased")
            }
        }
        return problems
    }

    // MARK: The invariants

    /// Every invariant, in the order printed; the agents must be stopped (their caches are opened).
    func check(plaintexts: [UUID: [UUID: [UInt8]]]) async throws -> [ChaosInvariant] {
        var results: [ChaosInvariant] = []
        results.append(try await outboxPublished())
        results.append(try await revocationsCompleted())
        let state = try await ServerState.read(stack)
        results.append(try await devicesConverged(state: state))
        results.append(try await recordsDecrypt(state: state, plaintexts: plaintexts))
        results.append(try await databaseConstraints())
        results.append(try await agentCaches(state: state, plaintexts: plaintexts))
        results.append(try await auditChains())
        return results
    }

    /// Every committed revocation's outbox rows (and every other row) published: none unsent, none
    /// missing from its topic; the copies delivered more than once counted (the consumers dedupe).
    func outboxPublished() async throws -> ChaosInvariant {
        let rows = try await stack.withConnection(schema: ChaosStack.grantSchema) { connection in
            try await connection.query("SELECT topic, payload, sent_at IS NOT NULL FROM outbox").map {
                try $0.decode(String.self, Data.self, Bool.self)
            }
        }
        let events = try await stack.count(schema: ChaosStack.grantSchema, "SELECT count(*) FROM revocation_events")
        var published: [String: [Data: Int]] = [:]
        var reissues = 0
        let reissueSchema = Data(CommandReissue.schema.utf8)
        let topics = try await stack.services.messages([.revocationEvents, .accessEvents, .deviceCommands], partitions: ChaosStack.partitions)
        for (topic, messages) in topics {
            for message in messages {
                let value = message.value ?? Data()
                // The audit service's re-issues share the commands' topic; they are not the outbox's.
                if topic == .deviceCommands, value.range(of: reissueSchema) != nil {
                    reissues += 1
                    continue
                }
                published[stack.topicPrefix + topic.rawValue, default: [:]][value, default: 0] += 1
            }
        }
        let unsent = rows.filter { !$0.2 }.count
        let lost = rows.filter { published[$0.0]?[$0.1] == nil }.count
        let duplicates = published.values.flatMap(\.values).reduce(0) { $0 + max(0, $1 - 1) }
        let distinct = published.values.map(\.count).reduce(0, +)
        let strays = distinct - Set(rows.map { "\($0.0)|\($0.1.base64EncodedString())" }).count
        let revocationRows = rows.filter { $0.0.hasSuffix(Topic.revocationEvents.rawValue) }.count
        // Deduplicated downstream: the audit service took each event once.
        let processed = try await stack.count(schema: ChaosStack.auditSchema, "SELECT count(*) FROM revocations")
        let doubled = try await stack.count(
            schema: ChaosStack.auditSchema,
            "SELECT count(*) FROM (SELECT 1 FROM audit_log GROUP BY event_type, source_id HAVING count(*) > 1) AS twice")
        return ChaosInvariant(
            name: "outbox_published",
            holds: unsent == 0 && lost == 0 && strays == 0 && revocationRows == events && processed == events && doubled == 0,
            detail:
                "\(rows.count) outbox rows (\(events) committed revocations), \(unsent) unsent, \(lost) lost, \(strays) strays; "
                + "\(duplicates) duplicate deliveries, deduplicated: \(processed) revocations taken once, \(doubled) audit entries doubled; "
                + "\(reissues) re-issues by the audit service",
            counts: [
                "rows": rows.count, "revocations": events, "unsent": unsent, "lost": lost, "strays": strays,
                "duplicate_deliveries": duplicates, "audit_entries_doubled": doubled, "reissues": reissues,
            ])
    }

    /// Every revocation completed, once: as many in the audit service as committed, every device
    /// in a final state, one `revocation_completed` entry each.
    func revocationsCompleted() async throws -> ChaosInvariant {
        let grant = ChaosStack.grantSchema
        let audit = ChaosStack.auditSchema
        let committed = try await stack.count(schema: grant, "SELECT count(*) FROM revocation_events")
        let tracked = try await stack.count(schema: audit, "SELECT count(*) FROM revocations")
        let completed = try await stack.count(schema: audit, "SELECT count(*) FROM revocations WHERE completed_at IS NOT NULL")
        let devices = try await stack.count(schema: audit, "SELECT count(*) FROM revocation_devices")
        let open = try await stack.count(
            schema: audit, "SELECT count(*) FROM revocation_devices WHERE state NOT IN ('applied', 'already_applied', 'healed')")
        let entries = try await stack.count(schema: audit, "SELECT count(*) FROM audit_log WHERE event_type = 'revocation_completed'")
        let distinctEntries = try await stack.count(
            schema: audit, "SELECT count(DISTINCT source_id) FROM audit_log WHERE event_type = 'revocation_completed'")
        let states = try await stack.withConnection(schema: audit) { connection in
            try await connection.query("SELECT state, count(*) FROM revocation_devices GROUP BY state ORDER BY state").map {
                try $0.decode(String.self, Int.self)
            }
        }
        var counts = ["committed": committed, "tracked": tracked, "completed": completed, "device_states": devices, "devices_open": open]
        for (state, count) in states { counts["state_\(state)"] = count }
        return ChaosInvariant(
            name: "revocations_completed",
            holds: committed == tracked && completed == committed && open == 0 && entries == committed && distinctEntries == committed,
            detail:
                "\(committed) committed, \(tracked) tracked, \(completed) completed; \(devices) device answers ("
                + states.map { "\($0.0) \($0.1)" }.joined(separator: ", ") + "), \(open) open; \(entries) revocation_completed entries",
            counts: counts)
    }

    /// Every expected device at the final version, or erased.
    func devicesConverged(state: ServerState) async throws -> ChaosInvariant {
        var atVersion = 0
        var erased = 0
        var neverHeld = 0
        var wrong: [String] = []
        for agent in workload.agents {
            let status = try await AgentStatus.read(configuration: try agent.configuration)
            let userID = workload.users[agent.user].userID
            for (member, version) in state.versions {
                let local = status.familyMembers.first { $0.familyMemberID == member }
                if state.holders[member]?.contains(userID) == true {
                    if let local, local.status == "active", local.fmkVersion == version { atVersion += 1 } else {
                        wrong.append("\(agent.name) on \(member.uuidString.prefix(8))")
                    }
                } else if let local {
                    if local.status != "active" { erased += 1 } else { wrong.append("\(agent.name) on \(member.uuidString.prefix(8)) not erased") }
                } else {
                    neverHeld += 1
                }
            }
        }
        return ChaosInvariant(
            name: "devices_converged", holds: wrong.isEmpty,
            detail: "\(atVersion) device/member pairs at the final version, \(erased) erased, \(neverHeld) never held, \(wrong.count) wrong"
                + (wrong.isEmpty ? "" : ": " + wrong.joined(separator: "; ")),
            counts: ["at_final_version": atVersion, "erased": erased, "never_held": neverHeld, "wrong": wrong.count])
    }

    /// Every record decrypts with the final FMK, at the final version, with the content last
    /// written; none lost, none extra.
    func recordsDecrypt(state: ServerState, plaintexts: [UUID: [UUID: [UInt8]]]) async throws -> ChaosInvariant {
        let members = workload.model.members.withLock { $0 }
        var decrypted = 0
        var lost = 0
        var extra = 0
        var mismatched = 0
        var undecryptable = 0
        for member in members {
            guard let opened = plaintexts[member.id] else {
                undecryptable += state.records[member.id, default: 0]
                continue
            }
            decrypted += opened.count
            for (recordID, candidates) in member.records {
                guard let plaintext = opened[recordID] else {
                    lost += 1
                    continue
                }
                if !candidates.contains(plaintext) { mismatched += 1 }
            }
            extra += opened.keys.filter { member.records[$0] == nil }.count
            undecryptable += state.records[member.id, default: 0] - opened.count
        }
        let behind = try await stack.count(
            schema: ChaosStack.grantSchema,
            "SELECT count(*) FROM records r JOIN family_members f USING (family_member_id) WHERE r.fmk_version <> f.current_fmk_version")
        return ChaosInvariant(
            name: "records_decrypt",
            holds: lost == 0 && extra == 0 && mismatched == 0 && undecryptable == 0 && behind == 0,
            detail:
                "\(decrypted) records decrypt with their family member's final FMK; \(lost) lost, \(extra) unexpected, "
                + "\(mismatched) with other content, \(undecryptable) undecryptable, \(behind) at an older version (half re-encrypted)",
            counts: [
                "decrypted": decrypted, "lost": lost, "unexpected": extra, "mismatched": mismatched,
                "undecryptable": undecryptable, "old_version": behind,
            ])
    }

    /// The database's own constraints, checked again row by row (they are deferred: a violation
    /// could only hide in a transaction that should not have committed).
    func databaseConstraints() async throws -> ChaosInvariant {
        let grant = ChaosStack.grantSchema
        let checks: [(String, PostgresQuery)] = [
            ("active grants at an old version",
             "SELECT count(*) FROM access_grants g JOIN family_members f USING (family_member_id) WHERE g.revoked_at IS NULL AND g.fmk_version <> f.current_fmk_version"),
            ("family members with two active grants for one user",
             "SELECT count(*) FROM (SELECT 1 FROM access_grants WHERE revoked_at IS NULL GROUP BY family_member_id, grantee_user_id HAVING count(*) > 1) AS twice"),
            ("revoked grants keeping a wrapped key", "SELECT count(*) FROM access_grants WHERE revoked_at IS NOT NULL AND wrapped_fmk IS NOT NULL"),
            ("family members without their owner's active grant",
             "SELECT count(*) FROM family_members f WHERE NOT EXISTS (SELECT 1 FROM access_grants g WHERE g.family_member_id = f.family_member_id AND g.grantee_user_id = f.owner_user_id AND g.revoked_at IS NULL)"),
            ("key statement chains with gaps",
             "SELECT count(*) FROM (SELECT 1 FROM key_statements GROUP BY family_member_id HAVING max(seq) <> count(*)) AS gaps"),
            ("key statement heads not at the current version",
             "SELECT count(*) FROM family_members f WHERE (SELECT k.fmk_version FROM key_statements k WHERE k.family_member_id = f.family_member_id ORDER BY seq DESC LIMIT 1) IS DISTINCT FROM f.current_fmk_version"),
            ("versions not reached by a committed revocation",
             "SELECT count(*) FROM family_members f WHERE f.current_fmk_version - 1 <> (SELECT count(*) FROM revocation_events e WHERE e.family_member_id = f.family_member_id)"),
        ]
        var counts: [String: Int] = [:]
        var failing: [String] = []
        for (name, query) in checks {
            let count = try await stack.count(schema: grant, query)
            counts[name.replacingOccurrences(of: " ", with: "_")] = count
            if count != 0 { failing.append("\(name): \(count)") }
        }
        let audit = ChaosStack.auditSchema
        let gaps = try await stack.count(
            schema: audit,
            "SELECT count(*) FROM (SELECT 1 FROM audit_log GROUP BY family_member_id HAVING max(seq) <> count(*)) AS gaps")
        counts["audit_chains_with_gaps"] = gaps
        if gaps != 0 { failing.append("audit chains with gaps: \(gaps)") }
        let rows = try await stack.count(schema: grant, "SELECT (SELECT count(*) FROM records) + (SELECT count(*) FROM access_grants)")
        return ChaosInvariant(
            name: "database_constraints", holds: failing.isEmpty,
            detail: "\(checks.count + 1) checks over \(rows) records and grants: " + (failing.isEmpty ? "none violated" : failing.joined(separator: "; ")),
            counts: counts)
    }

    /// Every agent's cache holds exactly what the server holds for its user, decrypting to the
    /// same plaintexts; nothing of what it lost.
    func agentCaches(state: ServerState, plaintexts: [UUID: [UUID: [UInt8]]]) async throws -> ChaosInvariant {
        var consistent = 0
        var inconsistent: [String] = []
        var records = 0
        for agent in workload.agents {
            let device = try await DeviceAgent.open(configuration: try agent.configuration, logger: Logger(label: "rescind.chaos.check"))
            let userID = workload.users[agent.user].userID
            for member in state.versions.keys {
                let local = try? await device.plaintexts(of: member)
                if state.holders[member]?.contains(userID) == true {
                    if let local, local == plaintexts[member] {
                        consistent += 1
                        records += local.count
                    } else {
                        inconsistent.append(
                            "\(agent.name) on \(member.uuidString.prefix(8)): "
                                + Self.cacheDifference(local: local, server: plaintexts[member] ?? [:]))
                    }
                } else if let local, !local.isEmpty {
                    inconsistent.append("\(agent.name) still decrypts \(local.count) records of \(member.uuidString.prefix(8))")
                } else {
                    consistent += 1
                }
            }
        }
        return ChaosInvariant(
            name: "agent_caches", holds: inconsistent.isEmpty,
            detail: "\(consistent) agent/member caches match the server (\(records) records decrypted on devices), \(inconsistent.count) differ"
                + (inconsistent.isEmpty ? "" : ": " + inconsistent.joined(separator: "; ")),
            counts: ["consistent": consistent, "inconsistent": inconsistent.count, "records": records])
    }

    /// How a device's decrypted cache differs from the owner's records, in counts.
    static func cacheDifference(local: [UUID: [UInt8]]?, server: [UUID: [UInt8]]) -> String {
        guard let local else { return "no cache that opens (\(server.count) records expected)" }
        let missing = server.keys.filter { local[$0] == nil }.count
        let extra = local.keys.filter { server[$0] == nil }.count
        let stale = local.filter { id, plaintext in server[id].map { $0 != plaintext } ?? false }.count
        return "\(local.count) records, \(server.count) expected: \(missing) missing, \(extra) extra, \(stale) with other content"
    }

    /// Every family member's audit chain verifies on this machine with the audit key the run made.
    func auditChains() async throws -> ChaosInvariant {
        var verified = 0
        var entries = 0
        var failing: [String] = []
        let pins = stack.work.appendingPathComponent("pins")
        for member in workload.model.members.withLock({ $0 }) {
            let owner = workload.users[member.owner]
            let directory = pins.appendingPathComponent("\(member.owner)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let pin = AuditKeyPin(directory: directory.path)
            if try pin.pinned() == nil { try pin.pin(stack.services.auditKey) }
            let audit = AuditServiceClient(baseURL: stack.services.auditURLs[0], grantService: owner.sessions[0].client, tls: ChaosStack.clientTLS)
            let outcome = try await AccessLogVerifier(audit: audit, pin: pin).verify(member.id)
            entries += outcome.report.entries
            if outcome.report.valid { verified += 1 } else { failing.append("\(member.id.uuidString.prefix(8)): \(outcome.report)") }
        }
        return ChaosInvariant(
            name: "audit_chains", holds: failing.isEmpty,
            detail: "\(verified) of \(verified + failing.count) chains verify (\(entries) entries, signed heads, the run's audit key)"
                + (failing.isEmpty ? "" : ": " + failing.joined(separator: "; ")),
            counts: ["chains": verified + failing.count, "verified": verified, "entries": entries])
    }
}
