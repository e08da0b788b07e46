import Foundation
import RescindClient
import RescindCrypto
import RescindKafka
import RescindProtocol
import RescindTestSupport
import Testing

/// The exposure report joined end to end: the real grant service takes the
/// snapshot at the commit and seals it to the owner, the real audit service tracks the revoked
/// user's devices' erasure acks from Kafka, and the owner's client joins the two.
@Suite struct ExposureReportTests {
    @Test(.timeLimit(.minutes(4)))
    func aHalfSyncedDeviceThatErasedANeverSyncedOneAndOneThatNeverAcknowledged() async throws {
        try await GrantServiceHarness.with { grant in
            let adultA = try await EndToEndTests.member("Adult A", on: grant)
            let phoneKey = Ed25519.PrivateKey(), laptopKey = Ed25519.PrivateKey(), tabletKey = Ed25519.PrivateKey()
            let phone = try await UserSession.register(
                keys: .generate(), displayName: "Adult C", deviceName: "Adult C's phone", deviceKey: phoneKey,
                baseURL: grant.baseURL, tls: grant.clientTLS)
            let laptop = try await phone.addDevice(name: "Adult C's laptop", kind: .laptop, deviceKey: laptopKey)
            let tablet = try await phone.addDevice(name: "Adult C's tablet", kind: .tablet, deviceKey: tabletKey)
            let (emma, fmk) = try await adultA.session.createFamilyMember()
            for index in 0..<40 {
                _ = try await adultA.session.putRecord(emma, plaintext: Array("record \(index)".utf8), fmk: fmk, version: 1)
            }
            _ = try await adultA.session.grant(emma, to: phone.keys.userID)

            // The phone syncs half, four records a page; the laptop everything; the tablet nothing.
            _ = try await phone.client.wrappedKey(emma)
            var cursor: Int64 = 0
            for _ in 0..<5 { cursor = try await phone.client.changes(emma, since: cursor, limit: 4).nextCursor }
            _ = try await laptop.client.wrappedKey(emma)
            var page = try await laptop.client.changes(emma, since: 0, limit: 40)
            #expect(page.records.count == 40 && !page.hasMore)
            page = try await laptop.client.changes(emma, since: page.nextCursor, limit: 40)

            var configuration = AuditServiceHarness.configuration(
                cluster: grant.cluster, grantKey: grant.serviceKey, topicPrefix: grant.topicPrefix)
            configuration.grantService.url = grant.baseURL.absoluteString
            let audit = try await AuditServiceHarness.start(configuration: configuration, cluster: grant.cluster)
            do {
                try await scenario(
                    grant: grant, audit: audit, emma: emma, owner: adultA.session, phone: (phone, phoneKey),
                    laptop: laptop, tablet: tablet)
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
        grant: GrantServiceHarness, audit: AuditServiceHarness, emma: UUID, owner: UserSession,
        phone: (session: UserSession, key: Ed25519.PrivateKey), laptop: UserSession, tablet: UserSession
    ) async throws {
        let committed = try await owner.revoke(emma, user: phone.session.keys.userID, reason: "custody change")
        #expect(committed.devicesNotified == 4)  // A's phone rotates; C's three agents erase

        // Only the phone acts on its command and acknowledges the erasure.
        let commands = try await grant.messages(.deviceCommands, count: 4).map {
            try SignedMessage<DeviceCommand>.verified(from: $0.value ?? Data(), schema: DeviceCommand.schema, key: grant.serviceKey)
                .payload
        }
        let command = try #require(commands.first { $0.deviceID == phone.session.deviceID })
        #expect(command.action == .secureDeletion)
        let ackedAt = Timestamp.truncated(Date())
        let ack = DeviceAck(
            ackID: UUID(), commandID: command.commandID, eventID: command.eventID, deviceID: command.deviceID,
            action: command.action, outcome: .applied, recordsProcessed: 20, fmkVersion: 0, durationMs: 9, error: nil,
            ackedAt: ackedAt)
        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(bootstrapServers: grant.bootstrapServers, clientID: "test-agent"),
            logger: AuditServiceHarness.logger)
        _ = try await producer.send(
            topic: grant.topicPrefix + Topic.deviceAcks.rawValue, key: Data(command.deviceID.uuidString.lowercased().utf8),
            value: try SignedMessage(
                schema: DeviceAck.schema, signer: "device:\(command.deviceID.uuidString.lowercased())", payload: ack,
                key: phone.key
            ).encoded())
        await producer.shutdown()

        // The owner's client: the sealed snapshot from the grant service, the acks from the audit service.
        let exposure = try await owner.revocationExposure(committed.eventID)
        let auditClient = AuditServiceClient(baseURL: audit.baseURL, grantService: owner.client, tls: audit.clientTLS)
        var status: RevocationStatus?
        for _ in 0..<150 {
            status = try? await auditClient.revocation(committed.eventID)
            if status?.devices.first(where: { $0.deviceID == phone.session.deviceID })?.state == "applied" { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        let answered: RevocationStatus = try #require(status)
        let report = ExposureReport(exposure: exposure, status: answered)
        let devices = Dictionary(uniqueKeysWithValues: exposure.devices.map { ($0.deviceID, $0) })

        let halfSynced = try #require(devices[phone.session.deviceID])
        #expect(halfSynced.fmkVersion == 1 && halfSynced.recordsFetched == 20 && exposure.recordsTotal == 40)
        #expect(report.erasure(of: halfSynced) == .acknowledged(state: "applied", at: ackedAt))
        let full = try #require(devices[laptop.deviceID])
        #expect(full.recordsFetched == 40 && full.lastSyncAt != nil)
        #expect(report.erasure(of: full) == .notAcknowledged(state: "pending"))
        let never = try #require(devices[tablet.deviceID])
        #expect(never.neverSynced && never.recordsFetched == 0)
        #expect(report.erasure(of: never) == .notAcknowledged(state: "pending"))

        // Only the laptop still holds ciphertext and the old key; the printed report says so.
        #expect(report.stillHolding.map(\.deviceID) == [laptop.deviceID])
        let lines = report.lines
        #expect(lines.contains { $0.contains("FMK v1, 20 of 40 records") })
        #expect(lines.contains { $0.contains("erasure: acknowledged \(Timestamp.format(ackedAt)) (applied)") })
        #expect(lines.contains { $0.contains("NEVER ACKNOWLEDGED (pending): still holds ciphertext and the FMK v1 key") })
        #expect(lines.contains { $0.contains("never synced") })
        #expect(lines.contains { $0.contains("Plaintext already seen") })
    }
}
