import Foundation
import DeviceAgent
import Logging
import RescindClient
import RescindCrypto
import RescindDevKit
import RescindObservability
import RescindPostgres
import RescindProtocol
import RescindTLS
import RescindTracing
import Tracing

/// The guide's story for Emma, played on real processes.
struct DemoStory: Sendable {
    let repository: URL
    let directory: DemoDirectory
    let databaseURL: String
    let kafkaBootstrapServers: String
    /// `RESCIND_KAFKA_FETCH_WAIT_MS` for the audit service and the agents (the Kafka consumers).
    let kafkaFetchWaitMilliseconds: Int
    let topicPrefix: String
    let grantPort: Int
    let auditPort: Int
    let emmaRecords: Int
    let ackDeadlineSeconds: Int
    /// The CA and server certificate every HTTP hop of the demo uses.
    let tls: DemoTLS
    let timeline = DemoTimeline()

    var grantSchema: String { "demo_grant" + schemaSuffix }
    var auditSchema: String { "demo_audit" + schemaSuffix }
    /// Non-default ports get their own schemas, so a test run never touches an interactive demo.
    var schemaSuffix: String { grantPort == 8080 ? "" : "_\(grantPort)" }

    var grantURL: URL { URL(string: "https://127.0.0.1:\(grantPort)")! }
    var auditURL: URL { URL(string: "https://127.0.0.1:\(auditPort)")! }
    /// How the demo's own clients reach the services: the demo's CA only, no plain HTTP.
    var clientTLS: ClientTLS { ClientTLS(caFile: tls.caFile) }
    /// The audit service's operator token file (0600): the monitoring page and API ask for it.
    var operatorTokenFile: URL { directory.keys.appendingPathComponent("audit-operator.token") }
    var binaries: URL { URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent() }

    /// A device agent of the demo, as a process.
    struct Agent: Sendable {
        let name: String
        let slug: String
        let deviceID: UUID
        let owner: UserSession
        let environment: [String: String]
        var configuration: AgentConfiguration { get throws { try AgentConfiguration(environment: environment) } }
    }

    func play() async throws {
        let started = ContinuousClock.now
        // 1. Servers
        timeline.section("1. Servers")
        try await resetSchemas()
        let grantKey = try writeSigningKey(named: "grant-service")
        // The operator's token file, made as an operator makes it.
        let token = try await ChildProcess.run(
            binaries.appendingPathComponent("rescind-admin"), ["keys", "token", operatorTokenFile.path])
        guard token.status == 0 else { throw CLIError("rescind-admin keys token failed: \(token.output)") }
        var common = [
            "RESCIND_DATABASE_URL": databaseURL, "RESCIND_KAFKA_BOOTSTRAP_SERVERS": kafkaBootstrapServers,
            "RESCIND_TOPIC_PREFIX": topicPrefix, "RESCIND_LOG_LEVEL": "info", "PATH": "/usr/bin:/bin",
        ].merging(Self.tracing) { $1 }
        try await provisionTopics(into: &common)
        var processes: [String: DemoProcess] = [:]
        processes["grant"] = try DemoProcess.launch(
            name: "grant-service", executable: binaries.appendingPathComponent("rescind-grant-service"),
            environment: common.merging([
                "RESCIND_GRANT_PORT": String(grantPort), "RESCIND_GRANT_DB_SCHEMA": grantSchema,
                "RESCIND_GRANT_MIGRATIONS_DIR": repository.appendingPathComponent("migrations/grant").path,
                "RESCIND_GRANT_SIGNING_KEY_FILE": grantKey.path, "RESCIND_OUTBOX_POLL_MS": "500",
                "RESCIND_GRANT_TLS_CERT_FILE": tls.certificateFile, "RESCIND_GRANT_TLS_KEY_FILE": tls.keyFile,
            ]) { $1 }, directory: directory)
        try await waitUntilReady(grantURL, name: "grant service", process: processes["grant"]!)
        timeline.log("grant service", "ready on \(grantURL.absoluteString) (pid \(processes["grant"]!.pid))")
        processes["audit"] = try DemoProcess.launch(
            name: "audit-service", executable: binaries.appendingPathComponent("rescind-audit-service"),
            environment: common.merging([
                "RESCIND_AUDIT_PORT": String(auditPort), "RESCIND_AUDIT_DB_SCHEMA": auditSchema,
                "RESCIND_AUDIT_MIGRATIONS_DIR": repository.appendingPathComponent("migrations/audit").path,
                "RESCIND_AUDIT_SIGNING_KEY_FILE": directory.keys.appendingPathComponent("audit-service.key").path,
                "RESCIND_AUDIT_CREATE_SIGNING_KEY": "true",
                "RESCIND_AUDIT_OPERATOR_TOKEN_FILE": operatorTokenFile.path,
                "RESCIND_AUDIT_TLS_CERT_FILE": tls.certificateFile, "RESCIND_AUDIT_TLS_KEY_FILE": tls.keyFile,
                "RESCIND_GRANT_SERVICE_PUBLIC_KEY": grantKey.publicKey,
                // The CLI's key chain violation reports are authenticated with the grant service.
                "RESCIND_GRANT_SERVICE_URL": grantURL.absoluteString, "RESCIND_CA_FILE": tls.caFile,
                "RESCIND_AUDIT_ACK_DEADLINE_SECONDS": String(ackDeadlineSeconds),
                "RESCIND_AUDIT_KAFKA_SESSION_TIMEOUT_MS": "6000", "RESCIND_AUDIT_KAFKA_HEARTBEAT_MS": "1000",
                "RESCIND_KAFKA_FETCH_WAIT_MS": String(kafkaFetchWaitMilliseconds),
            ]) { $1 }, directory: directory)
        try await waitUntilReady(auditURL, name: "audit service", process: processes["audit"]!)
        timeline.log("audit service", "ready on \(auditURL.absoluteString) (pid \(processes["audit"]!.pid))")
        let watcher = Task { await DemoWatcher(bootstrapServers: kafkaBootstrapServers, topicPrefix: topicPrefix, timeline: timeline).run() }
        defer { watcher.cancel() }

        // 2. People, devices, records
        timeline.section("2. People, devices and Emma's records")
        // Each user acts through their first device, whose agent also runs: every device
        // that receives commands is a real agent.
        var agents: [Agent] = []
        var users: [UserSession] = []
        var recoveryKeys: [RecoveryKey] = []  // each person's paper
        for (name, devices) in [
            ("Adult A", ["Adult A's iPhone", "Adult A's iPad"]), ("Adult B", ["Adult B's iPhone", "Adult B's laptop"]),
            ("Adult C", ["Adult C's iPhone", "Adult C's iPad"]),
        ] {
            let deviceID = UUID()
            let deviceKey = Ed25519.PrivateKey()
            let recoveryKey = try RecoveryKey.generate()
            let user = try await UserSession.register(
                keys: .generate(), displayName: name, deviceID: deviceID, deviceName: devices[0], deviceKey: deviceKey,
                recoveryKey: recoveryKey, baseURL: grantURL, tls: clientTLS)
            timeline.name(user.keys.userID, name)
            timeline.log(
                name, "registered with X25519 + Ed25519 public keys (private keys never leave the device) and a recovery key (words on paper)")
            users.append(user)
            recoveryKeys.append(recoveryKey)
            agents.append(try await enrol(name: devices[0], owner: user, deviceID: deviceID, deviceKey: deviceKey, grantKey: grantKey))
            for device in devices.dropFirst() {
                agents.append(try await enrol(name: device, owner: user, deviceID: UUID(), deviceKey: Ed25519.PrivateKey(), grantKey: grantKey))
            }
        }
        let (adultA, adultB, adultC) = (users[0], users[1], users[2])
        // A device enrolled by another device may approve or veto only a security delay later
        // (a thief's own new device must not); A's recovery words vouch for the iPad at once.
        let aIPad = agents.first { $0.name == "Adult A's iPad" }!
        try await recoveryKeys[0].order(.vouch, for: adultA.keys.userID, deviceID: aIPad.deviceID, through: adultA.client)
        timeline.log("Adult A", "vouched for the iPad with the recovery words: it may veto a change to Adult A's identity at once")

        let (emma, emmaFMK) = try await adultA.createFamilyMember()
        let (liam, liamFMK) = try await adultA.createFamilyMember()
        timeline.name(emma, "Emma")
        timeline.name(liam, "Liam")
        try await addRecords(emmaRecords, to: emma, fmk: emmaFMK, by: adultA)
        try await addRecords(50, to: liam, fmk: liamFMK, by: adultA)
        timeline.log("Adult A", "created Emma (\(emmaRecords) records) and Liam (50 records), encrypted on the client")
        for (grantee, name) in [(adultB, "Adult B"), (adultC, "Adult C")] {
            let code = try await adultA.grant(emma, to: grantee.keys.userID)
            timeline.log("Adult A", "shared Emma with \(name); verification code \(code) (both sides compute it)")
        }
        try await adultA.grant(liam, to: adultB.keys.userID)
        timeline.log("Adult A", "shared Liam with Adult B")

        for agent in agents {
            processes[agent.slug] = try launch(agent)
        }
        try await waitFor("every device to sync Emma", timeout: .seconds(90)) {
            try await allAgents(agents, hold: emma, version: 1, records: emmaRecords)
        }
        try await waitFor("every agent to join the device_commands consumer group", timeout: .seconds(60)) {
            agents.allSatisfy { agent in
                (try? String(contentsOfFile: processes[agent.slug]!.logPath, encoding: .utf8))?.contains("kafka.partitions=") == true
            }
        }
        timeline.log("devices", "all \(agents.count) agents hold Emma v1 (\(emmaRecords) records, encrypted at rest) and listen for commands")

        // 3. Revoke C
        timeline.section("3. Adult A revokes Adult C's access to Emma")
        let (cOldFMK, _) = try await adultC.currentFMK(emma)
        let (first, trace) = try await traced("revoke") {
            try await adultA.revoke(
                emma, user: adultC.keys.userID, reason: "custody change", uploadBatchSize: 250,
                progress: ProgressBar(label: "  re-encrypting").update)
        }
        timeline.log(
            "Adult A",
            "committed: Emma → FMK v\(first.newFMKVersion), \(first.recordsReencrypted) records swapped atomically, \(first.devicesNotified) devices commanded")
        if let trace { timeline.log("Adult A", "trace \(trace): the revocation from this client to every device's ack") }
        let firstStatus = try await waitForCompletion(first.eventID, timeout: .seconds(60))

        // 4. C is locked out
        timeline.section("4. Adult C is locked out")
        do {
            _ = try await adultC.client.wrappedKey(emma)
            timeline.log("Adult C", "UNEXPECTED: still received a wrapped key")
        } catch let error as GrantServiceError {
            timeline.log("Adult C", "GET /v1/family-members/…/key → \(error.status) \(error.code)")
        }
        for agent in agents where agent.owner.keys.userID == adultC.keys.userID {
            let status = try await AgentStatus.read(configuration: try agent.configuration)
            let member = status.familyMembers.first { $0.familyMemberID == emma }
            timeline.log(agent.name, "Emma is \(member?.status ?? "gone") locally; no FMK, cached records re-encrypted under a discarded key")
        }

        // 5. Re-grant: current version only
        timeline.section("5. Adult A re-grants Adult C: current state only")
        let code = try await adultA.grant(emma, to: adultC.keys.userID)
        timeline.log("Adult A", "re-granted Emma to Adult C at FMK v2 (code \(code))")
        try await waitFor("Adult C's devices to pick up v2", timeout: .seconds(60)) {
            try await allAgents(agents.filter { $0.owner.keys.userID == adultC.keys.userID }, hold: emma, version: 2, records: emmaRecords)
        }
        let current = try await adultA.allRecords(emma)
        let opened = current.filter { (try? RecordCipher.open($0, fmk: cOldFMK)) != nil }.count
        timeline.log("Adult C", "devices hold v2 again; the v1 key C kept opens \(opened) of \(current.count) current records")

        // 6-7. Offline iPad, stolen phone
        timeline.section("6. Adult A's iPad goes offline; Adult B's iPhone is stolen")
        let iPad = agents.first { $0.name == "Adult A's iPad" }!
        await processes[iPad.slug]!.stop()
        timeline.log(iPad.name, "offline (agent stopped)")
        // The owner's stolen-device flow (`rescind revoke --everywhere --stolen`): revoke B
        // everywhere now, re-grant only to keys the stolen phone never held.
        var recovery = try await adultA.beginStolenDeviceRecovery(user: adultB.keys.userID, reason: "device stolen")
        var stolen: [UUID] = []
        for step in try await adultA.advance(&recovery, progress: ProgressBar(label: "  re-encrypting").update, save: { _ in }) {
            guard case .revoked(let member, let version, let records, let event) = step else { continue }
            stolen.append(event)
            timeline.log("Adult A", "revoked Adult B from \(timeline.nameOf(member)) → FMK v\(version), \(records) records")
        }
        timeline.log("Adult A", "the re-grant waits for Adult B's new identity keys")
        let phone = agents.first { $0.name == "Adult B's iPhone" }!
        let laptop = agents.first { $0.name == "Adult B's laptop" }!
        let bLaptop = try await DeviceIdentity.session(configuration: try laptop.configuration)
        try await bLaptop.client.retireDevice(phone.deviceID)
        timeline.log("Adult B", "retired Adult B's iPhone from the laptop (`rescind device retire`): its tokens and challenges are dead")
        // `rescind identity rotate` on the laptop's keystore; its agent restarts with the new keys.
        await processes[laptop.slug]!.stop()
        let rotation = try await KeystoreRotation.rotateIdentity(configuration: try laptop.configuration, recoveryKey: recoveryKeys[1])
        let bRotated = try await DeviceIdentity.session(configuration: try laptop.configuration)
        processes[laptop.slug] = try launch(laptop)
        timeline.log(
            "Adult B",
            "rotated identity keys on the laptop (`rescind identity rotate --recovery`): generation \(rotation.generation), "
                + "signed by the old identity key and the new, approved at once with the recovery words; the keys on the phone are retired")
        var codeSeenByA = ""
        for step in try await adultA.advance(&recovery, save: { _ in }) {
            if case .confirmNewKeys(_, let code) = step { codeSeenByA = code }
        }
        let codeShownByB = try bRotated.keys.agreementKey.verificationCode(
            with: try X25519.PublicKey(rawRepresentation: [UInt8](adultA.keys.agreementKey.publicKey.rawRepresentation)))
        timeline.log("Adult A", "compares codes with Adult B: \(codeSeenByA) here, \(codeShownByB) on B's laptop")
        for step in try await adultA.advance(&recovery, confirmedCode: codeShownByB, save: { _ in }) {
            guard case .regranted(let member, let version, _) = step else { continue }
            timeline.log("Adult A", "re-granted \(timeline.nameOf(member)) to Adult B's new keys at FMK v\(version)")
        }
        let newPhone = try await enrol(
            name: "Adult B's new iPhone", owner: bRotated, deviceID: UUID(), deviceKey: Ed25519.PrivateKey(), grantKey: grantKey)
        processes[newPhone.slug] = try launch(newPhone)
        try await waitFor("Adult B's new iPhone to sync", timeout: .seconds(60)) {
            try await allAgents([newPhone], hold: emma, version: 3, records: emmaRecords)
        }
        timeline.log(newPhone.name, "holds Emma v3 (\(emmaRecords) records) under Adult B's new keys")
        // The thief: the phone's keys and device key, as copied from it.
        do {
            _ = try await adultB.client.wrappedKey(emma)
            timeline.log("thief", "UNEXPECTED: the stolen phone still received a wrapped key")
        } catch let error as GrantServiceError {
            timeline.log("thief", "the stolen iPhone asks for Emma's key → \(error.status) \(error.code)")
        }
        do {
            _ = try await adultB.addDevice(name: "thief's device")
            timeline.log("thief", "UNEXPECTED: enrolled a device with the stolen keys")
        } catch let error as GrantServiceError {
            timeline.log("thief", "tries to enrol a device with the stolen identity key → \(error.status) \(error.code)")
        }
        // Until the audit service reports the iPad's ack overdue; at most the deadline and 2 s (as
        // long as the demo always waited: without the live timeline no alert shows).
        _ = await timeline.waitFor("ALERT ack overdue from \(iPad.name)", timeout: .seconds(ackDeadlineSeconds + 2))

        // 8. The iPad returns
        timeline.section("7. Adult A's iPad comes back online")
        processes[iPad.slug] = try launch(iPad)
        timeline.log(iPad.name, "online again: replays its pending commands and checks versions with the grant service")
        var statuses = [firstStatus]
        for event in stolen {
            statuses.append(try await waitForCompletion(event, timeout: .seconds(90)))
        }

        // 8. A compromised grant service
        timeline.section("8. A compromised grant service hands Adult C a key Adult A never issued")
        try await forgeKey(for: adultC, of: emma)
        try await swapRecipientKey(of: bRotated, before: adultA, revokes: adultC, from: emma)

        // 9. A stolen, unlocked phone whose thief acts first
        statuses += try await thiefActsFirst(
            owner: adultA, recoveryKey: recoveryKeys[0], phone: agents.first { $0.name == "Adult A's iPhone" }!, iPad: iPad,
            members: [emma, liam], processes: &processes)

        // Summary
        timeline.section("Summary")
        for status in statuses {
            let devices = status.devices.map { "\(timeline.nameOf($0.deviceID)): \($0.state)\($0.late ? " (late)" : "")" }
            print("  \(timeline.nameOf(status.familyMemberID)) v\(status.newFMKVersion): \(status.revokedUserID.map { "revoked \(timeline.nameOf($0))" } ?? "rotated"); "
                + "commit → last ack \(status.commitToLastAckMs.map { "\($0) ms" } ?? "—")")
            print("      " + devices.joined(separator: "; "))
        }
        let elapsed = ContinuousClock.now - started
        print("""

              The demo took \(elapsed.wholeSeconds) s. The stack keeps running:
                CA certificate    \(tls.caFile) (the services' certificates are signed by it)
                monitoring page   \(auditURL.absoluteString)/  (sign in with the operator token in \(operatorTokenFile.path))
                grant metrics     \(grantURL.absoluteString)/metrics
                audit metrics     \(auditURL.absoluteString)/metrics
                follow a topic    RESCIND_TOPIC_PREFIX=\(topicPrefix) rescind-admin tail device_acks --from-beginning
                logs              \(directory.logs.path)/
              Stop everything with: scripts/demo.sh --down
            """)
    }

    // MARK: Steps

    /// `body` under a root span named `name`, and that trace's id (`nil` when tracing is off).
    func traced<T>(_ name: String, _ body: () async throws -> T) async throws -> (T, String?) {
        try await InstrumentationSystem.tracer.withAnySpan(name, context: .topLevel) { span in
            (try await body(), span.context.traceContext?.traceIDHex)
        }
    }

    /// Act 9: a thief with Adult A's unlocked iPhone rotates A's identity before A notices. The
    /// rotation only waits for the security delay; A's iPad sees it and vetoes it, retires the
    /// phone, rotates the identity with the recovery words and rotates every family member A
    /// owns. - Returns: the rotations' completion statuses.
    func thiefActsFirst(
        owner thief: UserSession, recoveryKey: RecoveryKey, phone: Agent, iPad: Agent, members: [UUID],
        processes: inout [String: DemoProcess]
    ) async throws -> [RevocationStatus] {
        timeline.section("9. Adult A's iPhone is stolen unlocked, and the thief acts first")
        let generation = try await thief.client.me().user.identityGeneration
        let begun = try await thief.registerRotation(to: UserKeys.generate(userID: thief.keys.userID), currentGeneration: generation)
        timeline.log(
            "thief", "begins rotating Adult A's identity from the stolen iPhone → pending until \(Timestamp.format(begun.effectiveAt)) (security delay)")
        // The grant service announced it in the same transaction: the iPad's running agent hears
        // of it on device_commands (a signed governance notice), without asking.
        let announced = ContinuousClock.now
        try await waitFor("the iPad's agent to hear of the pending rotation", timeout: .seconds(30)) {
            try await AgentStatus.read(configuration: try iPad.configuration).pendingGovernance
                .contains { $0.operationID == begun.operationID }
        }
        timeline.log(
            iPad.name,
            "hears of it on device_commands after \(Self.milliseconds(ContinuousClock.now - announced)) ms (a signed governance notice; `rescind-agent pending` lists it)")
        let onIPad = try await DeviceIdentity.session(configuration: try iPad.configuration)
        _ = try await onIPad.client.vetoOperation(begun.operationID)
        timeline.log(iPad.name, "vetoes it (`rescind-agent veto`): it never takes effect, and the iPhone is frozen")
        do {
            _ = try await thief.registerRotation(to: UserKeys.generate(userID: thief.keys.userID), currentGeneration: generation)
            timeline.log("thief", "UNEXPECTED: began another rotation from a frozen device")
        } catch let error as GrantServiceError {
            timeline.log("thief", "tries again → \(error.status) \(error.code)")
        }
        try await onIPad.client.retireDevice(phone.deviceID)
        timeline.log("Adult A", "retires the iPhone from the iPad")
        await processes[iPad.slug]!.stop()
        let rotation = try await KeystoreRotation.rotateIdentity(configuration: try iPad.configuration, recoveryKey: recoveryKey)
        let owner = try await DeviceIdentity.session(configuration: try iPad.configuration)
        processes[iPad.slug] = try launch(iPad)
        timeline.log("Adult A", "rotates the identity on the iPad with the recovery words (approved at once): generation \(rotation.generation)")
        var statuses: [RevocationStatus] = []
        for member in members {
            let committed = try await owner.rotate(member, reason: "Adult A's iPhone stolen")
            timeline.log(
                "Adult A", "rotated \(timeline.nameOf(member)) → FMK v\(committed.newFMKVersion), \(committed.recordsReencrypted) records")
            statuses.append(try await waitForCompletion(committed.eventID, timeout: .seconds(90)))
        }
        timeline.log("Adult A", "still owns Emma and Liam: the stolen iPhone's keys open nothing written from now on")
        return statuses
    }

    /// Installs an agent for a device; registers the device first unless it is the one the
    /// user registered with.
    func enrol(
        name: String, owner: UserSession, deviceID: UUID, deviceKey: Ed25519.PrivateKey, grantKey: SigningKeyFile
    ) async throws -> Agent {
        let slug = name.lowercased().replacingOccurrences(of: "'s ", with: "-").replacingOccurrences(of: " ", with: "-")
        if deviceID != owner.deviceID {
            _ = try await owner.addDevice(name: name, deviceID: deviceID, deviceKey: deviceKey)
        }
        let keyFile = directory.agents.appendingPathComponent("\(slug).key")
        guard FileManager.default.createFile(
            atPath: keyFile.path, contents: Data(SecureRandom.bytes(count: 32)), attributes: [.posixPermissions: 0o600])
        else { throw CLIError("cannot write \(keyFile.path)") }
        let environment = [
            "RESCIND_AGENT_DATA_DIR": directory.agents.appendingPathComponent(slug).path,
            "RESCIND_AGENT_KEY_FILE": keyFile.path,
            "RESCIND_AGENT_GRANT_SERVICE_URL": grantURL.absoluteString,
            "RESCIND_AGENT_GRANT_SERVICE_KEY": grantKey.publicKey,
            "RESCIND_AGENT_CA_FILE": tls.caFile,
            "RESCIND_KAFKA_BOOTSTRAP_SERVERS": kafkaBootstrapServers,
            "RESCIND_KAFKA_FETCH_WAIT_MS": String(kafkaFetchWaitMilliseconds),
            "RESCIND_TOPIC_PREFIX": topicPrefix,
            "RESCIND_AGENT_SELF_HEAL_SECONDS": "10",
            "RESCIND_AGENT_LOG_LEVEL": "info",
            "PATH": "/usr/bin:/bin",
        ].merging(Self.libraryPath) { $1 }.merging(Self.tracing) { $1 }
        try await AgentEnrolment.install(
            userKeys: owner.keys, deviceID: deviceID, deviceKey: deviceKey,
            configuration: try AgentConfiguration(environment: environment))
        timeline.name(deviceID, name)
        timeline.log(name, "enrolled: device key registered, keystore written (0600) under its own key file")
        return Agent(name: name, slug: slug, deviceID: deviceID, owner: owner, environment: environment)
    }

    func launch(_ agent: Agent) throws -> DemoProcess {
        try DemoProcess.launch(
            name: "agent-\(agent.slug)", executable: binaries.appendingPathComponent("rescind-agent"), arguments: ["run"],
            environment: agent.environment, directory: directory)
    }

    func addRecords(_ count: Int, to familyMember: UUID, fmk: SecretKey, by owner: UserSession) async throws {
        let kinds = ["vaccination", "allergy", "medication", "lab result", "visit note", "growth chart"]
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for index in stride(from: worker, to: count, by: 8) {
                        let text = "{\"kind\":\"\(kinds[index % kinds.count])\",\"entry\":\(index),\"note\":\""
                        let plaintext = Array(text.utf8) + Array(repeating: UInt8(ascii: "."), count: 1_900) + Array("\"}".utf8)
                        _ = try await owner.putRecord(familyMember, plaintext: plaintext, fmk: fmk, version: 1)
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    func allAgents(_ agents: [Agent], hold familyMember: UUID, version: Int, records: Int) async throws -> Bool {
        for agent in agents {
            let status = try await AgentStatus.read(configuration: try agent.configuration)
            guard let member = status.familyMembers.first(where: { $0.familyMemberID == familyMember }),
                member.fmkVersion == version, member.records == records
            else { return false }
        }
        return true
    }

    /// Polls the audit service until every expected device has acknowledged.
    func waitForCompletion(_ eventID: UUID, timeout: Duration) async throws -> RevocationStatus {
        var last: RevocationStatus?
        try await waitFor("the audit service to see every ack of \(eventID.uuidString.prefix(8))", timeout: timeout) {
            last = try? await auditStatus(eventID)
            return last?.completedAt != nil
        }
        return last!
    }

    func auditStatus(_ eventID: UUID) async throws -> RevocationStatus {
        try await AuditServiceClient(
            baseURL: auditURL, operatorToken: try AuditServiceClient.operatorToken(fromFile: operatorTokenFile.path),
            timeout: .seconds(10), tls: clientTLS
        ).revocation(eventID)
    }

    // MARK: Plumbing

    static func milliseconds(_ duration: Duration) -> Int {
        duration.wholeMilliseconds
    }

    func waitFor(_ what: String, timeout: Duration, _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if (try? await condition()) == true { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw CLIError("timed out waiting for \(what); see the logs in \(directory.logs.path)")
    }

    func waitUntilReady(_ url: URL, name: String, process: DemoProcess) async throws {
        try await waitFor("the \(name) to become ready", timeout: .seconds(60)) {
            guard process.isRunning else {
                throw CLIError("the \(name) exited; see \(process.logPath)")
            }
            return try await GrantServiceClient(baseURL: url, timeout: .seconds(5), tls: clientTLS).isReady()
        }
        guard process.isRunning else { throw CLIError("the \(name) exited; see \(process.logPath)") }
    }

    /// The demo's topics (its own prefix), provisioned as `rescind-admin migrate kafka` does before
    /// any service starts; on a broker that creates topics on first use
    /// (`RESCIND_KAFKA_TOPICS_AUTO_CREATED=true`, the development broker) there is nothing to do.
    func provisionTopics(into common: inout [String: String]) async throws {
        var environment = ProcessInfo.processInfo.environment
        environment["RESCIND_KAFKA_BOOTSTRAP_SERVERS"] = kafkaBootstrapServers
        environment["RESCIND_TOPIC_PREFIX"] = topicPrefix
        for (name, value) in environment where name == "RESCIND_KAFKA_TOPICS_AUTO_CREATED" || name.hasPrefix("RESCIND_KAFKA_TOPIC_") {
            common[name] = value
        }
        common.merge(Self.libraryPath) { $1 }
        // As an operator does it: the operator's tool, before any service starts.
        let migrated = try await ChildProcess.run(
            binaries.appendingPathComponent("rescind-admin"), ["migrate", "kafka"], environment: environment,
            timeout: .seconds(120))
        guard migrated.status == 0 else {
            throw CLIError("rescind-admin migrate kafka failed (status \(migrated.status)): \(migrated.output)")
        }
        if migrated.output.contains("nothing to do") {
            timeline.log("kafka", "topics \(topicPrefix)* are created by the broker on first use")
        } else {
            let topics = migrated.output.split(separator: "\n").filter { $0.hasPrefix("kafka: created") || $0.hasSuffix("up to date") }
            timeline.log("kafka", "provisioned \(topics.count) topics \(topicPrefix)* (rescind-admin migrate kafka)")
        }
    }

    /// The collector of `RESCIND_OTEL_EXPORTER_OTLP_ENDPOINT` when set: every process exports to it.
    static var tracing: [String: String] {
        ProcessInfo.processInfo.environment["RESCIND_OTEL_EXPORTER_OTLP_ENDPOINT"].map { ["RESCIND_OTEL_EXPORTER_OTLP_ENDPOINT": $0] } ?? [:]
    }

    /// `LD_LIBRARY_PATH` when set: a librdkafka loaded at run time (newer than the system's,
    /// for brokers such as Tansu) reaches every process the demo starts.
    static var libraryPath: [String: String] {
        ProcessInfo.processInfo.environment["LD_LIBRARY_PATH"].map { ["LD_LIBRARY_PATH": $0] } ?? [:]
    }

    /// Plays a grant service whose database an attacker writes to: C's wrapped FMK of `familyMember`
    /// is replaced by one for a key the attacker knows (wrapped to C's real key, so it unwraps). C's
    /// client checks it against Adult A's signed key statement, refuses it, keeps what it had and
    /// reports it; the audit service announces the report (the watcher shows it). The forged row is
    /// put back afterwards, so the stack stays usable.
    func forgeKey(for victim: UserSession, of familyMember: UUID) async throws {
        let pool = PostgresConnectionPool(
            configuration: try PostgresConfiguration(url: databaseURL), size: 1, logger: Logger(label: "rescind.demo"))
        let reporting = victim.reporting(
            to: AuditServiceViolationReporter(audit: AuditServiceClient(baseURL: auditURL, grantService: victim.client, tls: clientTLS)))
        let served = try await victim.client.wrappedKey(familyMember)
        let attacker = X25519.PrivateKey()
        let forged = try FMKWrapping.wrap(
            SecretKey(), familyMemberID: familyMember, version: UInt32(served.fmkVersion), granter: attacker,
            grantee: try X25519.PublicKey(rawRepresentation: [UInt8](victim.keys.agreementKey.publicKey.rawRepresentation)))
        func setWrapped(_ wrapped: Data, granterKey: Data?) async throws {
            try await pool.withConnection { connection in
                try await connection.execute(
                    """
                    UPDATE \(identifier: grantSchema).access_grants
                    SET wrapped_fmk = \(wrapped), granter_agreement_public_key = \(granterKey)
                    WHERE family_member_id = \(familyMember) AND grantee_user_id = \(victim.keys.userID) AND revoked_at IS NULL
                    """)
            }
        }
        do {
            try await setWrapped(Data(forged), granterKey: Data(attacker.publicKey.rawRepresentation))
            timeline.log("attacker", "replaced Adult C's wrapped FMK in the grant service's database with one for a key it knows")
            do {
                _ = try await reporting.currentFMK(familyMember)
                timeline.log("Adult C", "UNEXPECTED: accepted a key Adult A never issued")
            } catch {
                timeline.log("Adult C", "\(error)")
            }
        } catch {
            try? await setWrapped(served.wrappedFMK, granterKey: served.granterAgreementPublicKey)
            await pool.close()
            throw error
        }
        try await setWrapped(served.wrappedFMK, granterKey: served.granterAgreementPublicKey)
        await pool.close()
        // The report's notification reaches the timeline (at most the 2 s the demo always waited).
        _ = await timeline.waitFor("refused a key history", timeout: .seconds(2))
        timeline.log("attacker", "put the original row back; Adult C's client reads Emma again: \(try await reporting.readRecords(familyMember).count) records")
    }

    /// Plays a grant service whose database an attacker writes to, the other way round: Adult B's
    /// X25519 key in `users` is replaced by the attacker's just before Adult A revokes Adult C, so
    /// that the new FMK would be wrapped to a key the attacker holds. A's client wraps only to keys
    /// it verified (the one A's signed history names for B, pinned after comparing codes): the
    /// revocation is refused before anything is wrapped, abandoned, and reported. The row is put
    /// back afterwards.
    func swapRecipientKey(of victim: UserSession, before owner: UserSession, revokes revoked: UserSession, from familyMember: UUID) async throws {
        let pool = PostgresConnectionPool(
            configuration: try PostgresConfiguration(url: databaseURL), size: 1, logger: Logger(label: "rescind.demo"))
        let reporting = owner.reporting(
            to: AuditServiceViolationReporter(audit: AuditServiceClient(baseURL: auditURL, grantService: owner.client, tls: clientTLS)))
        let original = try await owner.client.user(victim.keys.userID).agreementPublicKey
        let attacker = X25519.PrivateKey()
        func setKey(_ key: Data) async throws {
            try await pool.withConnection { connection in
                try await connection.execute(
                    "UPDATE \(identifier: grantSchema).users SET agreement_public_key = \(key) WHERE user_id = \(victim.keys.userID)")
            }
        }
        do {
            try await setKey(Data(attacker.publicKey.rawRepresentation))
            timeline.log("attacker", "replaced Adult B's X25519 key in the grant service's database with its own, before Adult A's next revocation")
            do {
                let committed = try await reporting.revoke(familyMember, user: revoked.keys.userID, reason: "demo: swapped key")
                timeline.log("Adult A", "UNEXPECTED: committed FMK v\(committed.newFMKVersion) wrapped to the attacker's key")
            } catch let error as KeyHistoryError {
                timeline.log("Adult A", "refused to wrap Emma's new FMK to a key it never verified (\(error.code.rawValue)): the revocation was abandoned, nothing committed")
            }
        } catch {
            try? await setKey(original)
            await pool.close()
            throw error
        }
        try await setKey(original)
        await pool.close()
        _ = await timeline.waitFor("refused a recipient key", timeout: .seconds(2))
        let (_, version) = try await owner.currentFMK(familyMember)
        timeline.log("attacker", "put the original key back; Emma is still at FMK v\(version), and no copy of it was ever wrapped to the attacker's key")
    }

    /// Each run starts from empty schemas (the services migrate them at start).
    func resetSchemas() async throws {
        try await TestDatabases.dropSchemas([grantSchema, auditSchema], url: databaseURL)
    }

    struct SigningKeyFile {
        let path: String
        let publicKey: String
    }

    func writeSigningKey(named name: String) throws -> SigningKeyFile {
        let path = directory.keys.appendingPathComponent("\(name).key").path
        var seed = SecureRandom.bytes(count: Ed25519.seedByteCount)
        guard FileManager.default.createFile(atPath: path, contents: Data(seed), attributes: [.posixPermissions: 0o600]) else {
            throw CLIError("cannot write \(path)")
        }
        let key = try Ed25519.PrivateKey(seed: &seed)
        return SigningKeyFile(path: path, publicKey: Data(key.publicKey.rawRepresentation).base64EncodedString())
    }
}
