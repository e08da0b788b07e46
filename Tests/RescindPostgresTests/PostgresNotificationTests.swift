import RescindPostgres
import Testing

@Suite("LISTEN/NOTIFY")
struct PostgresNotificationTests {
    /// The next notification on `channel`, skipping `.listening` events.
    static func nextNotification(from listener: PostgresNotificationListener) async throws -> PostgresNotification {
        try await withTimeout(seconds: 10) {
            for await event in listener {
                if case .notification(let notification) = event { return notification }
            }
            throw TimeoutError()
        }
    }

    static func nextListening(from listener: PostgresNotificationListener) async throws {
        try await withTimeout(seconds: 10) {
            for await event in listener where event == .listening { return }
            throw TimeoutError()
        }
    }

    @Test func aNotificationIsDelivered() async throws {
        let channel = TestDatabase.uniqueName("Outbox")  // mixed case: names are exact
        let listener = try await PostgresNotificationListener.start(
            configuration: TestDatabase.configuration(), channels: [channel], logger: TestDatabase.logger)
        try await Self.nextListening(from: listener)

        let sender = try await PostgresConnection.connect(configuration: TestDatabase.configuration(), logger: TestDatabase.logger)
        try await sender.transaction { connection in
            try await connection.notify(channel: channel, payload: "row 42")
        }
        let notification = try await Self.nextNotification(from: listener)
        #expect(notification.channel == channel)
        #expect(notification.payload == "row 42")
        #expect(notification.backendPID == (await sender.backendPID))
        await sender.close()
        listener.stop()
    }

    @Test func theListenerReconnectsAfterItsConnectionIsKilled() async throws {
        let channel = TestDatabase.uniqueName("relay")
        var configuration = try TestDatabase.configuration(applicationName: channel)
        configuration.connectTimeoutSeconds = 2
        let listener = try await PostgresNotificationListener.start(
            configuration: configuration, channels: [channel], reconnectDelay: .milliseconds(100), logger: TestDatabase.logger)
        try await Self.nextListening(from: listener)

        let admin = try await PostgresConnection.connect(configuration: TestDatabase.configuration(), logger: TestDatabase.logger)
        let pid = try await admin.query("SELECT pid FROM pg_stat_activity WHERE application_name = \(channel)")[0]
            .decode(Int32.self, column: 0)
        try await TestDatabase.terminateBackend(pid)
        try await Self.nextListening(from: listener)

        try await admin.notify(channel: channel, payload: "after reconnect")
        #expect(try await Self.nextNotification(from: listener).payload == "after reconnect")
        await admin.close()
        listener.stop()
    }

    @Test func stopEndsTheSequence() async throws {
        let listener = try await PostgresNotificationListener.start(
            configuration: TestDatabase.configuration(), channels: [TestDatabase.uniqueName("idle")], logger: TestDatabase.logger)
        listener.stop()
        let remaining = try await withTimeout(seconds: 5) {
            var count = 0
            for await _ in listener { count += 1 }
            return count
        }
        #expect(remaining <= 1)  // at most the initial `.listening`
    }
}
