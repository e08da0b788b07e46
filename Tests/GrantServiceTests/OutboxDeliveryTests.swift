import Foundation
import RescindClient
import RescindKafka
import RescindProtocol
import RescindTestSupport
import Testing

/// The relay publishes every committed outbox row to Kafka, byte for byte and once,
/// even when the broker was down while the change committed.
@Suite struct OutboxDeliveryTests {
    struct Message: Hashable {
        let topic: String
        let key: Data
        let value: Data
    }

    /// The outbox's rows but the governance notices (the iPad's enrolment announced), which
    /// `GovernanceAnnouncementTests` covers.
    static func committed(_ service: GrantServiceHarness) async throws -> [Message] {
        try await service.withConnection { connection in
            try await connection.query("SELECT topic, message_key, payload FROM outbox ORDER BY outbox_id").map { row in
                let (topic, key, payload) = try row.decode(String.self, String.self, Data.self)
                return Message(topic: topic, key: Data(key.utf8), value: payload)
            }
        }.filter { !GrantServiceHarness.isGovernanceNotice($0.value) }
    }

    static func unsent(_ service: GrantServiceHarness) async throws -> Int {
        try await service.count("SELECT count(*) FROM outbox WHERE sent_at IS NULL")
    }

    /// Everything on the service's topics, after checking nothing follows the expected count.
    static func delivered(_ service: GrantServiceHarness, expecting counts: [Topic: Int]) async throws -> [Message] {
        try await withThrowingTaskGroup(of: [Message].self) { group in
            for (topic, count) in counts {
                group.addTask {
                    let messages = try await service.messages(topic, count: count)
                    // Nothing more: a duplicate would show up as one message too many.
                    await #expect(throws: HarnessError.self, "more than \(count) message(s) on \(topic)") {
                        _ = try await service.messages(topic, count: count + 1, timeout: .seconds(2))
                    }
                    return messages.map { Message(topic: $0.topic, key: $0.key ?? Data(), value: $0.value ?? Data()) }
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
    }

    @Test func everyEventIsDeliveredExactlyAsCommittedAfterABrokerOutage() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 3)
            _ = try await home.adultC.addDevice(name: "Adult C's iPad")
            try await service.eventually("the access events are published") { try await Self.unsent(service) == 0 }

            for broker in service.cluster.brokerIDs { try await service.cluster.setBrokerDown(broker) }
            // The revocation does not need Kafka to commit: its messages wait in the outbox.
            let committed = try await home.adultA.revoke(home.emma, user: home.adultC.keys.userID, reason: "custody change")
            #expect(committed.devicesNotified == 4)
            try await Task.sleep(for: .milliseconds(500))
            #expect(try await Self.unsent(service) == 1 + 4)
            for broker in service.cluster.brokerIDs { try await service.cluster.setBrokerUp(broker) }
            try await service.eventually("the relay catches up", timeout: .seconds(30)) { try await Self.unsent(service) == 0 }

            let expected = try await Self.committed(service)
            #expect(expected.count == 3 + 1 + 4)  // created + 2 grants, the revocation, one command per device
            #expect(Set(expected).count == expected.count)
            let counts = Dictionary(grouping: expected, by: \.topic).reduce(into: [Topic: Int]()) { counts, entry in
                let topic = Topic.allCases.first { service.topicPrefix + $0.rawValue == entry.key }!
                counts[topic] = entry.value.count
            }
            let delivered = try await Self.delivered(service, expecting: counts)
            #expect(Set(delivered) == Set(expected))
            #expect(delivered.count == expected.count)

            // And each is the signed message it claims to be.
            let event = try SignedMessage<RevocationEvent>.verified(
                from: try #require(delivered.first { $0.topic.hasSuffix(Topic.revocationEvents.rawValue) }).value,
                schema: RevocationEvent.schema, key: service.serviceKey)
            #expect(event.payload.eventID == committed.eventID)
            for command in delivered where command.topic.hasSuffix(Topic.deviceCommands.rawValue) {
                let payload = try SignedMessage<DeviceCommand>.verified(
                    from: command.value, schema: DeviceCommand.schema, key: service.serviceKey
                ).payload
                #expect(command.key == Data(payload.deviceID.uuidString.lowercased().utf8))
                #expect(payload.eventID == committed.eventID)
            }
        }
    }

    @Test("a revocation's commands are written together: after their event, one per device, each kept with the same envelope")
    func commandsOfARevocationAreWrittenAsOneBatch() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 3)
            _ = try await home.adultC.addDevice(name: "Adult C's iPad")
            let committed = try await home.adultA.revoke(home.emma, user: home.adultC.keys.userID, reason: "batch")
            #expect(committed.devicesNotified == 4)
            let rows = try await service.withConnection { connection in
                try await connection.query("SELECT outbox_id, topic, message_key, payload FROM outbox ORDER BY outbox_id").map {
                    try $0.decode(Int64.self, String.self, String.self, Data.self)
                }
            }
            let eventRow = try #require(rows.last { $0.1 == service.topicPrefix + Topic.revocationEvents.rawValue })
            let commandRows = rows.filter {
                $0.1 == service.topicPrefix + Topic.deviceCommands.rawValue && !GrantServiceHarness.isGovernanceNotice($0.3)
            }
            #expect(commandRows.count == 4)
            #expect(commandRows.allSatisfy { $0.0 > eventRow.0 })
            let kept = try await service.withConnection { connection in
                try await connection.query(
                    "SELECT device_id, envelope FROM device_commands WHERE event_id = \(committed.eventID) ORDER BY seq"
                ).map { try $0.decode(UUID.self, Data.self) }
            }
            #expect(kept.map { $0.1 } == commandRows.map { $0.3 })
            for (row, (deviceID, _)) in zip(commandRows, kept) {
                let command = try SignedMessage<DeviceCommand>.verified(from: row.3, schema: DeviceCommand.schema, key: service.serviceKey).payload
                #expect(command.deviceID == deviceID)
                #expect(row.2 == deviceID.uuidString.lowercased())
                #expect(command.eventID == committed.eventID)
            }
            #expect(Set(kept.map { $0.0 }).count == 4)
        }
    }
}
