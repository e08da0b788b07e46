import Foundation
import RescindClient
import RescindCrypto
import RescindKafka
import RescindProtocol
import RescindTestSupport
import Testing

@testable import DeviceAgent

/// A thief with Adult A's unlocked phone begins rotating A's identity before A notices. A's
/// iPad runs the real `rescind-agent`: the grant service's signed notice reaches it on
/// `device_commands` within seconds, `rescind-agent pending` lists it and `rescind-agent veto`
/// stops it. Notices nobody genuine sent (another key, another device's) are refused and kept nowhere.
@Suite("Governance notices reach the user's other devices", .serialized)
struct GovernanceNoticeTests {
    @Test(.timeLimit(.minutes(3)))
    func theThiefsRotationIsHeardOnTheIPadWhichVetoesIt() async throws {
        try await GrantServiceHarness.with { service in
            let phone = try await service.user("Adult A")  // the device the thief holds
            let iPad = try await AgentTestKit.enrol(phone, on: service, name: "Adult A's iPad")
            try await service.ageEnrolments(of: phone.keys.userID)  // the iPad is months old
            let environment = AgentProcess.environment(iPad.configuration)
            let agent = try AgentProcess(["run"], environment: environment)
            try await agent.waitFor("partitions assigned")

            // Forged notices keyed to the iPad come first: signed by a key that is not the grant
            // service's, and a genuine one addressed to another device. Neither is kept.
            let grantKey = try AgentTestKit.serviceSigningKey(service)
            let forgedOperation = UUID()
            let forged = GovernanceNotice(
                deviceID: iPad.deviceID, audience: .user, userID: phone.keys.userID, change: .rotateIdentity, state: .pending,
                operationID: forgedOperation, actorDeviceID: UUID(), effectiveAt: Date().addingTimeInterval(3600), occurredAt: Date())
            var misaddressed = forged
            misaddressed.deviceID = phone.deviceID
            let producer = try KafkaProducer(
                configuration: KafkaProducerConfiguration(bootstrapServers: service.bootstrapServers, clientID: "test-forger"),
                logger: AgentTestKit.logger)
            for (notice, key) in [(forged, Ed25519.PrivateKey()), (misaddressed, grantKey)] {
                _ = try await producer.send(
                    topic: service.topicPrefix + Topic.deviceCommands.rawValue, key: Data(iPad.deviceID.text.utf8),
                    value: try SignedMessage(schema: GovernanceNotice.schema, signer: "grant-service", payload: notice, key: key).encoded())
            }
            await producer.shutdown()
            try await agent.waitFor("reason=misaddressed")
            #expect(agent.text.contains("reason=bad_signature"), "\(agent.text)")

            // The thief moves first. The iPad hears of it within seconds.
            let begun = try await phone.registerRotation(to: UserKeys.generate(userID: phone.keys.userID), currentGeneration: 1)
            let started = ContinuousClock.now
            try await agent.waitFor("an identity rotation of your user was begun by device \(phone.deviceID.text)")
            #expect(ContinuousClock.now - started < .seconds(10))
            #expect(agent.text.contains("rescind-agent veto \(begun.operationID.text)"), "\(agent.text)")

            // `pending` beside the running agent lists it; `veto` stops it and freezes the phone.
            let (listed, pending) = try await AgentProcess.run(["pending"], environment: environment)
            #expect(listed == 0 && pending.contains(begun.operationID.text) && !pending.contains(forgedOperation.text), "\(pending)")
            let (vetoStatus, vetoed) = try await AgentProcess.run(["veto", begun.operationID.text], environment: environment)
            #expect(vetoStatus == 0 && vetoed.contains("vetoed"), "\(vetoed)")
            try await agent.waitFor("an identity rotation of your user is vetoed")
            do {
                _ = try await phone.registerRotation(to: UserKeys.generate(userID: phone.keys.userID), currentGeneration: 1)
                Issue.record("the frozen phone began another rotation")
            } catch let error as GrantServiceError {
                #expect(error.status == 403 && error.code == "device_frozen", "\(error)")
            }

            // A replayed announcement changes nothing: the pending notice, sent again after the veto,
            // is recognised (kept once, not logged again) and does not bring the operation back.
            // On the topic: the enrolment, the two forgeries, the pending notice, the veto's two.
            let genuine = try await service.messages(.deviceCommands, count: 6, governance: true).filter {
                let notice = (try? SignedMessage<GovernanceNotice>.verified(
                    from: $0.value ?? Data(), schema: GovernanceNotice.schema, key: service.serviceKey))?.payload
                return notice?.deviceID == iPad.deviceID && notice?.state == .pending
            }
            let replayed = try #require(genuine.first?.value)
            let logged = agent.lines.filter { $0.contains("was begun by device \(phone.deviceID.text)") }.count
            let replayer = try KafkaProducer(
                configuration: KafkaProducerConfiguration(bootstrapServers: service.bootstrapServers, clientID: "test-replayer"),
                logger: AgentTestKit.logger)
            _ = try await replayer.send(
                topic: service.topicPrefix + Topic.deviceCommands.rawValue, key: Data(iPad.deviceID.text.utf8), value: replayed)
            // A marker behind it on the same partition: once it is refused, the replay was read.
            var marker = forged
            marker.noticeID = UUID()
            _ = try await replayer.send(
                topic: service.topicPrefix + Topic.deviceCommands.rawValue, key: Data(iPad.deviceID.text.utf8),
                value: try SignedMessage(schema: GovernanceNotice.schema, signer: "grant-service", payload: marker, key: Ed25519.PrivateKey()).encoded())
            await replayer.shutdown()
            try await AgentTestKit.eventually("the marker refused") {
                agent.lines.filter { $0.contains("reason=bad_signature") }.count == 2
            }
            #expect(agent.lines.filter { $0.contains("was begun by device \(phone.deviceID.text)") }.count == logged)

            // Nothing is left pending on the iPad; the forged notices were never kept.
            agent.signal(SIGTERM)
            #expect(try await agent.exitStatus() == 0)
            let status = try await AgentStatus.read(configuration: iPad.configuration)
            #expect(status.pendingGovernance.isEmpty, "\(status.pendingGovernance)")
            #expect(status.counters["rejected_bad_signature"] == 2 && status.counters["rejected_misaddressed"] == 1, "\(status.counters)")
            #expect(!status.summary.contains("!"), "\(status.summary)")
        }
    }
}
