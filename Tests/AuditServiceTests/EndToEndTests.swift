import Foundation
import RescindClient
import RescindCrypto
import RescindKafka
import RescindProtocol
import RescindTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The real grant service and the audit service on one Kafka cluster: a revocation
/// committed through the HTTP API is audited, tracked to completion from the devices'
/// signed acks, and readable through the access-log API by its owner only.
@Suite struct EndToEndTests {
    /// A user whose device key the test holds, so it can act as their device agent.
    struct Member {
        let session: UserSession
        let deviceKey: Ed25519.PrivateKey
        var userID: UUID { session.keys.userID }
    }

    static func member(_ name: String, on grant: GrantServiceHarness) async throws -> Member {
        let deviceKey = Ed25519.PrivateKey()
        let session = try await UserSession.register(
            keys: .generate(), displayName: name, deviceName: "\(name)'s phone", deviceKey: deviceKey,
            baseURL: grant.baseURL, tls: grant.clientTLS)
        return Member(session: session, deviceKey: deviceKey)
    }

    /// A bearer token for the member's device (challenge–response with the grant service).
    static func token(_ member: Member, grant: GrantServiceHarness) async throws -> String {
        func post<Body: Encodable, Answer: Decodable>(_ path: String, _ body: Body, as: Answer.Type) async throws -> Answer {
            let answer = try await TestHTTP.send(
                "POST", grant.baseURL.appendingPathComponent(path), headers: [("Content-Type", "application/json")],
                body: try CanonicalJSON.encode(body))
            return try CanonicalJSON.decode(Answer.self, from: answer.body)
        }
        let deviceID = member.session.deviceID
        let challenge = try await post(
            "v1/auth/challenge", ChallengeRequest(deviceID: deviceID), as: ChallengeResponse.self)
        let signature = member.deviceKey.signature(
            for: DeviceAuthentication.signingInput(challengeID: challenge.challengeID, deviceID: deviceID, nonce: challenge.nonce))
        return try await post(
            "v1/auth/token", TokenRequest(challengeID: challenge.challengeID, deviceID: deviceID, signature: Data(signature)),
            as: TokenResponse.self
        ).token
    }

    static func get(_ url: URL, token: String?) async throws -> (Int, Data) {
        let answer = try await TestHTTP.send("GET", url, headers: token.map { [("Authorization", "Bearer \($0)")] } ?? [])
        return (answer.status, answer.body)
    }

    @Test func aRealRevocationIsAuditedTrackedAndReadableByTheOwnerOnly() async throws {
        try await GrantServiceHarness.with { grant in
            let adultA = try await Self.member("Adult A", on: grant)
            let adultB = try await Self.member("Adult B", on: grant)
            let adultC = try await Self.member("Adult C", on: grant)
            let (emma, fmk) = try await adultA.session.createFamilyMember()
            for index in 0..<3 {
                _ = try await adultA.session.putRecord(emma, plaintext: Array("record \(index)".utf8), fmk: fmk, version: 1)
            }
            _ = try await adultA.session.grant(emma, to: adultB.userID)
            _ = try await adultA.session.grant(emma, to: adultC.userID)

            // The audit service joins the grant service's cluster and topics, and fetches its key.
            var configuration = AuditServiceHarness.configuration(
                cluster: grant.cluster, grantKey: nil, topicPrefix: grant.topicPrefix)
            configuration.grantService.url = grant.baseURL.absoluteString
            let audit = try await AuditServiceHarness.start(configuration: configuration, cluster: grant.cluster)
            do {
                try await scenario(grant: grant, audit: audit, emma: emma, adultA: adultA, adultB: adultB, adultC: adultC)
                await audit.stop()
                await audit.dropState()
            } catch {
                await audit.stop()
                await audit.dropState()
                throw error
            }
        }
    }

    func scenario(
        grant: GrantServiceHarness, audit: AuditServiceHarness, emma: UUID, adultA: Member, adultB: Member, adultC: Member
    ) async throws {
        let committed = try await adultA.session.revoke(emma, user: adultC.userID, reason: "custody change")
        #expect(committed.devicesNotified == 3)

        // Each device agent acts on its command and signs its ack.
        let keys = Dictionary(uniqueKeysWithValues: [adultA, adultB, adultC].map { ($0.session.deviceID, $0.deviceKey) })
        let commands = try await grant.messages(.deviceCommands, count: 3).map {
            try SignedMessage<DeviceCommand>.verified(from: $0.value ?? Data(), schema: DeviceCommand.schema, key: grant.serviceKey)
                .payload
        }
        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(bootstrapServers: grant.bootstrapServers, clientID: "test-agents"),
            logger: AuditServiceHarness.logger)
        for command in commands {
            let ack = DeviceAck(
                ackID: UUID(), commandID: command.commandID, eventID: command.eventID, deviceID: command.deviceID,
                action: command.action, outcome: .applied, recordsProcessed: 3,
                fmkVersion: command.action == .secureDeletion ? 0 : command.newFMKVersion, durationMs: 12, error: nil,
                ackedAt: Timestamp.truncated(Date()))
            let envelope = try SignedMessage(
                schema: DeviceAck.schema, signer: "device:\(command.deviceID.uuidString.lowercased())", payload: ack,
                key: try #require(keys[command.deviceID]))
            _ = try await producer.send(
                topic: grant.topicPrefix + Topic.deviceAcks.rawValue,
                key: Data(command.deviceID.uuidString.lowercased().utf8), value: try envelope.encoded())
        }
        await producer.shutdown()

        let notifications = try await AuditTestBed.notifications(
            count: 1, bootstrapServers: grant.bootstrapServers, topicPrefix: grant.topicPrefix, auditKey: audit.auditKey, timeout: .seconds(30))
        #expect(notifications.first?.kind == .revocationCompleted)
        #expect(notifications.first?.eventID == committed.eventID)
        #expect(notifications.first?.devices?.count == 3)

        // The owner reads the access log and opens every entry; nobody else can.
        let logURL = audit.baseURL.appendingPathComponent("v1/family-members/\(emma.uuidString.lowercased())/access-log")
        let ownerToken = try await Self.token(adultA, grant: grant)
        var page: AccessLogPage?
        for _ in 0..<100 {
            let (status, body) = try await Self.get(logURL, token: ownerToken)
            #expect(status == 200)
            page = try CanonicalJSON.decode(AccessLogPage.self, from: body)
            if page?.entries.count == 5 { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        let entries = try #require(page?.entries)
        // Newest recorded first. Recording order follows consumption, and the grant service's
        // two topics have no common order; `occurred_at` gives the order the owner reads in.
        #expect(entries.map(\.seq) == [5, 4, 3, 2, 1])
        let chronological = entries.sorted { ($0.occurredAt, $0.seq) < ($1.occurredAt, $1.seq) }
        #expect(chronological.map(\.eventType) == [
            "family_member_created", "access_granted", "access_granted", "access_revoked", "revocation_completed",
        ])
        for entry in entries {
            let details = try CanonicalJSON.decode(
                AuditDetails.self,
                from: Data(try AnonymousSealedBox.open([UInt8](entry.encryptedDetails), using: adultA.session.keys.agreementKey)))
            #expect(details.eventType == entry.eventType)
            #expect(throws: CryptoError.self) {
                try AnonymousSealedBox.open([UInt8](entry.encryptedDetails), using: adultC.session.keys.agreementKey)
            }
        }
        let revoked = try CanonicalJSON.decode(
            AuditDetails.self,
            from: Data(try AnonymousSealedBox.open([UInt8](chronological[3].encryptedDetails), using: adultA.session.keys.agreementKey)))
        #expect(revoked.targetUserID == adultC.userID && revoked.recordsReEncrypted == 3 && revoked.reason == "custody change")

        // Paginated, newest first.
        let (_, second) = try await Self.get(URL(string: logURL.absoluteString + "?limit=2&before=4")!, token: ownerToken)
        #expect(try CanonicalJSON.decode(AccessLogPage.self, from: second).entries.map(\.seq) == [3, 2])

        let (anonymous, _) = try await Self.get(logURL, token: nil)
        #expect(anonymous == 401)
        let (forged, _) = try await Self.get(logURL, token: "not-a-token")
        #expect(forged == 401)
        let (grantee, body) = try await Self.get(logURL, token: try await Self.token(adultB, grant: grant))
        #expect(grantee == 403)
        #expect(try CanonicalJSON.decode(APIErrorBody.self, from: body).error.code == "forbidden")

        let (verified, report) = try await Self.get(logURL.appendingPathComponent("verification"), token: ownerToken)
        #expect(verified == 200)
        let verification = try CanonicalJSON.decode(ChainVerificationReport.self, from: report)
        #expect(verification.valid && verification.entries == 5)
        #expect(verification.headHash == entries.first?.entryHash)
    }
}
