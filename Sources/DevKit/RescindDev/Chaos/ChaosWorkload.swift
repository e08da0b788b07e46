import DeviceAgent
import Foundation
import RescindClient
import RescindCrypto
import RescindDevKit
import RescindProtocol
import Synchronization

/// A user of the chaos run, acting through an interactive device (as the CLI does: no
/// revocation waits for it) with one session per grant service, so that an operation whose
/// grant service died is retried on the other, as behind a load balancer.
struct ChaosUser: Sendable {
    let index: Int
    let name: String
    let keys: UserKeys
    let sessions: [UserSession]
    var userID: UUID { keys.userID }
    /// The grant service this user talks to first.
    var preferred: Int { index % sessions.count }
}

/// An agent of the chaos run: a device of a user, as a `rescind-dev agent` process.
struct ChaosAgent: Sendable {
    let index: Int
    let name: String
    let user: Int
    let deviceID: UUID
    let environment: [String: String]
    let process: RestartableProcess
    var configuration: AgentConfiguration { get throws { try AgentConfiguration(environment: environment) } }
}

/// Where revocations are, so that a fault can strike during an upload, a commit or right after
/// one (the relay's batch, the audit service's transactions), per grant service.
final class ChaosSignals: Sendable {
    enum Event: Int, Sendable { case uploading = 0, committing, committed }
    private let counts = Mutex<[Int]>(Array(repeating: 0, count: 6))

    func note(_ event: Event, grant: Int) {
        counts.withLock { $0[grant * 3 + event.rawValue] += 1 }
    }

    /// How many times `event` happened (on `grant`, or on either).
    func count(_ event: Event, grant: Int? = nil) -> Int {
        counts.withLock { counts in
            if let grant { return counts[grant * 3 + event.rawValue] }
            return counts[event.rawValue] + counts[3 + event.rawValue]
        }
    }
}

/// A FIFO lock for async code: the key operations of one family member run one at a time.
actor AsyncMutex {
    private var locked = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func lock() async {
        guard locked else {
            locked = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    func unlock() {
        if waiters.isEmpty { locked = false } else { waiters.removeFirst().resume() }
    }

    nonisolated func run<T: Sendable>(_ body: @Sendable () async throws -> T) async rethrows -> T {
        await lock()
        do {
            let result = try await body()
            await unlock()
            return result
        } catch {
            await unlock()
            throw error
        }
    }
}

/// What the run expects to find: each family member's records (the plaintexts a record may
/// hold: one, or two when a write's answer was lost and it may or may not have landed), the
/// operations done, and the anomalies (an operation abandoned: the run fails).
final class ChaosModel: Sendable {
    struct Member: Sendable {
        let id: UUID
        let owner: Int
        var records: [UUID: [[UInt8]]] = [:]
        var order: [UUID] = []
    }

    let members: Mutex<[Member]>
    let operations = Mutex<[String: Int]>([:])
    let anomalies = Mutex<[String]>([])

    init(members: [Member]) {
        self.members = Mutex(members)
    }

    func count(_ operation: String, by amount: Int = 1) {
        operations.withLock { $0[operation, default: 0] += amount }
    }

    func anomaly(_ text: String) {
        anomalies.withLock { $0.append(text) }
    }
}

/// The seeded stream of operations of a chaos run — revocations, grants and re-grants, record
/// edits and additions across the family members — through the owner-side flows of
/// `RescindClient`, each retried until it took effect (a kill may answer an operation that
/// succeeded with an error: the retry looks at the service before trying again).
final class ChaosWorkload: Sendable {
    let stack: ChaosStack
    let users: [ChaosUser]
    let agents: [ChaosAgent]
    let model: ChaosModel
    let signals = ChaosSignals()
    let locks: [AsyncMutex]
    let log: @Sendable (String) -> Void
    /// How long one operation keeps retrying before it is counted as abandoned.
    let patience: Duration = .seconds(150)

    init(stack: ChaosStack, users: [ChaosUser], agents: [ChaosAgent], model: ChaosModel, log: @escaping @Sendable (String) -> Void) {
        self.stack = stack
        self.users = users
        self.agents = agents
        self.model = model
        self.locks = model.members.withLock { $0.map { _ in AsyncMutex() } }
        self.log = log
    }

    var memberCount: Int { locks.count }

    func member(_ index: Int) -> ChaosModel.Member { model.members.withLock { $0[index] } }

    // MARK: Set-up

    /// Five users (two owners, three grantees), three family members, six agents.
    static func setUp(
        stack: ChaosStack, recordsPerMember: Int, random: inout SeededGenerator, log: @escaping @Sendable (String) -> Void
    ) async throws -> ChaosWorkload {
        let names = ["Owner A", "Owner B", "Adult C", "Adult D", "Adult E"]
        var users: [ChaosUser] = []
        for (index, name) in names.enumerated() {
            let keys = UserKeys.generate()
            let deviceKey = Ed25519.PrivateKey()
            let deviceID = UUID()
            _ = try await UserSession.register(
                keys: keys, displayName: name, deviceID: deviceID, deviceName: "\(name)'s laptop", deviceRole: .interactive,
                deviceKey: deviceKey, baseURL: stack.services.grantURLs[index % 2], tls: ChaosStack.clientTLS)
            let history = KeyHistoryStore()
            let sessions = stack.services.grantURLs.map {
                UserSession(keys: keys, deviceID: deviceID, deviceKey: deviceKey, baseURL: $0, tls: ChaosStack.clientTLS, keyHistory: history)
            }
            users.append(ChaosUser(index: index, name: name, keys: keys, sessions: sessions))
        }
        // Family members: two of Owner A's, one of Owner B's; every user can be revoked from one.
        let plan: [(owner: Int, grantees: [Int])] = [(0, [1, 2, 3]), (0, [3, 4]), (1, [0, 2, 4])]
        var members: [ChaosModel.Member] = []
        for (index, entry) in plan.enumerated() {
            let owner = users[entry.owner].sessions[0]
            let (id, fmk) = try await owner.createFamilyMember()
            var member = ChaosModel.Member(id: id, owner: entry.owner)
            for slot in 0..<recordsPerMember {
                let plaintext = Self.plaintext(member: index, slot: slot, revision: 0, random: &random)
                let recordID = try await owner.putRecord(id, plaintext: plaintext, fmk: fmk, version: 1)
                member.records[recordID] = [plaintext]
                member.order.append(recordID)
            }
            for grantee in entry.grantees { try await owner.grant(id, to: users[grantee].userID) }
            members.append(member)
        }
        // Agents: a phone for each user, a tablet for Adult C; half on each grant service.
        let plans: [(user: Int, name: String)] = [
            (0, "Owner A's phone"), (1, "Owner B's phone"), (2, "Adult C's phone"), (2, "Adult C's tablet"), (3, "Adult D's phone"),
            (4, "Adult E's phone"),
        ]
        let agentsDirectory = stack.work.appendingPathComponent("agents")
        try FileManager.default.createDirectory(at: agentsDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var agents: [ChaosAgent] = []
        for (index, plan) in plans.enumerated() {
            let user = users[plan.user]
            let deviceKey = Ed25519.PrivateKey()
            let device = try await user.sessions[0].addDevice(name: plan.name, role: .agent, deviceKey: deviceKey)
            let keyFile = agentsDirectory.appendingPathComponent("agent-\(index).key")
            guard FileManager.default.createFile(
                atPath: keyFile.path, contents: Data(SecureRandom.bytes(count: 32)), attributes: [.posixPermissions: 0o600])
            else { throw CLIError("cannot write \(keyFile.path)") }
            let environment = stack.agentEnvironment(
                dataDirectory: agentsDirectory.appendingPathComponent("agent-\(index)"), keyFile: keyFile, grantIndex: index % 2)
            try await AgentEnrolment.install(
                userKeys: user.keys, deviceID: device.deviceID, deviceKey: deviceKey,
                configuration: try AgentConfiguration(environment: environment))
            let process = RestartableProcess(
                name: "agent-\(index)", executable: stack.binaries.appendingPathComponent("rescind-dev"), arguments: ["agent"],
                environment: environment, logs: stack.work.appendingPathComponent("logs"), readyURL: nil)
            agents.append(
                ChaosAgent(index: index, name: plan.name, user: plan.user, deviceID: device.deviceID, environment: environment, process: process))
        }
        stack.agents.withLock { $0 = agents.map(\.process) }
        for agent in agents { try await agent.process.start() }
        for agent in agents {
            guard await agent.process.waitForLog("partitions assigned", timeout: .seconds(90)) else {
                throw CLIError("\(agent.name) did not join the device_commands group:\n\(agent.process.child?.logTail() ?? "")")
            }
        }
        log("\(users.count) users, \(members.count) family members of \(recordsPerMember) records, \(agents.count) agents consuming")
        return ChaosWorkload(stack: stack, users: users, agents: agents, model: ChaosModel(members: members), log: log)
    }

    static func plaintext(member: Int, slot: Int, revision: Int, random: inout SeededGenerator) -> [UInt8] {
        let header = Array("{\"member\":\(member),\"slot\":\(slot),\"revision\":\(revision),\"note\":\"".utf8)
        let body = (0..<240).map { _ in UInt8(ascii: "a") + UInt8(random.next() % 26) }
        return header + body + Array("\"}".utf8)
    }

    // MARK: The stream

    enum Operation: Sendable {
        case revoke(member: Int, pick: Int)
        case grant(member: Int, pick: Int)
        case edit(member: Int, pick: Int)
        case add(member: Int)
    }

    static func nextOperation(_ random: inout SeededGenerator, members: Int) -> Operation {
        let member = Int.random(in: 0..<members, using: &random)
        let pick = Int.random(in: 0..<1000, using: &random)
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<35: return .revoke(member: member, pick: pick)
        case 35..<62: return .grant(member: member, pick: pick)
        case 62..<90: return .edit(member: member, pick: pick)
        default: return .add(member: member)
        }
    }

    /// Runs operations from `random` until `running()` is false.
    func run(worker: Int, random: SeededGenerator, running: @Sendable () -> Bool) async {
        var random = random
        while running() {
            let operation = Self.nextOperation(&random, members: memberCount)
            var content = random.split(UInt64(worker))
            _ = random.next()
            await perform(operation, random: &content)
            try? await Task.sleep(for: .milliseconds(Int.random(in: 50...400, using: &random)))
        }
    }

    func perform(_ operation: Operation, random: inout SeededGenerator) async {
        switch operation {
        case .revoke(let index, let pick):
            let done = await locks[index].run { [self] in
                guard let active = await activeGrantees(index), !active.isEmpty else { return false }
                _ = await revokeLocked(index, user: active[pick % active.count])
                return true
            }
            if !done { await perform(.grant(member: index, pick: pick), random: &random) }
        case .grant(let index, let pick):
            let done = await locks[index].run { [self] in
                guard let active = await activeGrantees(index) else { return true }
                let owner = member(index).owner
                let candidates = users.indices.filter { $0 != owner && !active.contains($0) }
                guard !candidates.isEmpty else { return false }
                _ = await grantLocked(index, user: candidates[pick % candidates.count])
                return true
            }
            if !done { await perform(.revoke(member: index, pick: pick), random: &random) }
        case .edit(let index, let pick):
            let current = member(index)
            let recordID = current.order[pick % current.order.count]
            let revision = (current.records[recordID]?.count ?? 0) + Int(random.next() % 1000)
            await write(index, recordID: recordID, plaintext: Self.plaintext(member: index, slot: pick, revision: revision, random: &random))
            model.count("edit")
        case .add(let index):
            let slot = member(index).order.count
            await write(index, recordID: UUID(), plaintext: Self.plaintext(member: index, slot: slot, revision: 0, random: &random))
            model.count("add")
        }
    }

    // MARK: Operations

    /// The users (indices) with an active grant to a family member, the owner left out, as the
    /// grant service says now; `nil` when it cannot be asked within the patience.
    func activeGrantees(_ index: Int) async -> [Int]? {
        let member = member(index)
        let owner = users[member.owner]
        let grants: [GrantResponse]? = await retrying("list grants", user: owner) { session in
            try await session.client.grants(member.id)
        }
        guard let grants else { return nil }
        let active = Set(grants.filter { $0.revokedAt == nil }.map(\.granteeUserID))
        return users.indices.filter { $0 != member.owner && active.contains(users[$0].userID) }
    }

    /// Revokes `user` from a family member (its lock held): retried until the grant service shows
    /// the grant ended. Returns whether it did.
    @discardableResult
    func revokeLocked(_ index: Int, user: Int) async -> Bool {
        let member = member(index)
        let owner = users[member.owner]
        let revoked = users[user].userID
        let signals = signals
        let outcome: Bool? = await retrying(
            "revoke \(users[user].name) from member \(index)", user: owner,
            settled: { session in
                let grants = try await session.client.grants(member.id)
                return grants.contains { $0.granteeUserID == revoked && $0.revokedAt == nil } ? nil : false
            }
        ) { session in
            let grant = session.client.baseURL == self.stack.services.grantURLs[0] ? 0 : 1
            _ = try await session.revoke(member.id, user: revoked, reason: "chaos", uploadBatchSize: 4) { progress in
                switch progress.phase {
                case .uploading: signals.note(.uploading, grant: grant)
                case .committing: signals.note(.committing, grant: grant)
                case .committed: signals.note(.committed, grant: grant)
                default: break
                }
            }
            return true
        }
        switch outcome {
        case true?: model.count("revoke")
        case false?:
            // Committed, but the answer was lost to a fault: found by looking.
            model.count("revoke")
            model.count("revoke_answer_lost")
        case nil: model.count("revoke_abandoned")
        }
        return outcome != nil
    }

    /// Grants (or re-grants) a family member to `user` (its lock held).
    @discardableResult
    func grantLocked(_ index: Int, user: Int) async -> Bool {
        let member = member(index)
        let owner = users[member.owner]
        let grantee = users[user].userID
        let outcome: Bool? = await retrying(
            "grant member \(index) to \(users[user].name)", user: owner,
            settled: { session in
                let grants = try await session.client.grants(member.id)
                return grants.contains { $0.granteeUserID == grantee && $0.revokedAt == nil } ? false : nil
            }
        ) { session in
            try await session.grant(member.id, to: grantee)
            return true
        }
        switch outcome {
        case true?: model.count("grant")
        case false?:
            model.count("grant")
            model.count("grant_answer_lost")
        case nil: model.count("grant_abandoned")
        }
        return outcome != nil
    }

    /// Writes a record as its owner at the current FMK version, retried until it is acknowledged;
    /// a write never acknowledged leaves the record with two possible contents.
    func write(_ index: Int, recordID: UUID, plaintext: [UInt8]) async {
        let member = member(index)
        let owner = users[member.owner]
        model.members.withLock { members in
            if members[index].records[recordID] == nil { members[index].order.append(recordID) }
            members[index].records[recordID, default: []].append(plaintext)
        }
        let done: Bool? = await retrying("write a record of member \(index)", user: owner) { session in
            let (fmk, version) = try await session.currentFMK(member.id)
            _ = try await session.putRecord(member.id, recordID: recordID, plaintext: plaintext, fmk: fmk, version: version)
            return true
        }
        model.members.withLock { members in
            // Acknowledged: this is the content from now on (an earlier unacknowledged write that
            // lands later cannot: it was sealed for an older version, or is this same plaintext).
            if done != nil { members[index].records[recordID] = [plaintext] }
        }
        if done == nil { model.count("write_abandoned") }
    }

    /// Runs `body` on the user's sessions, the other grant service after each failure, until it
    /// succeeds or `settled` finds (after a failure) that it already took effect; `nil` after
    /// `patience`.
    func retrying<T: Sendable>(
        _ what: String, user: ChaosUser, settled: (@Sendable (UserSession) async throws -> T?)? = nil,
        _ body: @Sendable (UserSession) async throws -> T
    ) async -> T? {
        let deadline = ContinuousClock.now + patience
        var attempt = 0
        while ContinuousClock.now < deadline {
            let session = user.sessions[(user.preferred + attempt) % user.sessions.count]
            attempt += 1
            do {
                return try await body(session)
            } catch {
                if attempt % 20 == 0 { log("still retrying \(what) (attempt \(attempt)): \(error)") }
                if let settled, let done = try? await settled(session) { return done }
            }
            try? await Task.sleep(for: .milliseconds(100 * min(attempt, 10)))
        }
        // An operation the system could not serve for that long is a failure of the run.
        log("gave up: \(what)")
        model.anomaly("gave up after \(patience): \(what)")
        return nil
    }

    // MARK: For the agents' faults

    /// A revocation that sends `agent` a command of `action`: its user revoked from a family
    /// member they do not own (granted first if needed), or someone else revoked from one its
    /// user keeps. Returns whether a revocation committed.
    func revocation(commanding agent: ChaosAgent, _ action: DeviceAction, random: inout SeededGenerator) async -> Bool {
        let user = agent.user
        let start = Int.random(in: 0..<memberCount, using: &random)
        let pick = Int.random(in: 0..<1000, using: &random)
        for offset in 0..<memberCount {
            let index = (start + offset) % memberCount
            let owner = member(index).owner
            switch action {
            case .secureDeletion:
                guard owner != user else { continue }
                return await locks[index].run { [self] in
                    guard let active = await activeGrantees(index) else { return false }
                    if !active.contains(user) { guard await grantLocked(index, user: user) else { return false } }
                    return await revokeLocked(index, user: user)
                }
            case .fmkRotation:
                let done: Bool? = await locks[index].run { [self] in
                    guard let active = await activeGrantees(index) else { return false }
                    guard owner == user || active.contains(user) else { return nil }
                    var others = active.filter { $0 != user }
                    if others.isEmpty {
                        let candidates = users.indices.filter { $0 != owner && $0 != user }
                        let extra = candidates[pick % candidates.count]
                        guard await grantLocked(index, user: extra) else { return false }
                        others = [extra]
                    }
                    return await revokeLocked(index, user: others[pick % others.count])
                }
                if let done { return done }
            }
        }
        // The user holds no family member: grant one, then revoke someone else from it.
        guard let index = (0..<memberCount).first(where: { member($0).owner != user }) else { return false }
        return await locks[index].run { [self] in
            guard await grantLocked(index, user: user) else { return false }
            guard let active = await activeGrantees(index) else { return false }
            let others = active.filter { $0 != user }
            if let other = others.first { return await revokeLocked(index, user: other) }
            let candidates = users.indices.filter { $0 != member(index).owner && $0 != user }
            let extra = candidates[pick % candidates.count]
            guard await grantLocked(index, user: extra) else { return false }
            return await revokeLocked(index, user: extra)
        }
    }
}
