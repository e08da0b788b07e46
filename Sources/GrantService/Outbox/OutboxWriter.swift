import Foundation
import RescindCrypto
import RescindPostgres
import RescindProtocol
import RescindTracing
import Tracing

/// Writes signed messages into the outbox inside the caller's transaction, so
/// that a message exists if and only if the change it announces committed. Each row keeps the
/// trace context current where it was written (the request's span), so that the relay, after a
/// crash as well, continues that trace on Kafka.
struct OutboxWriter: Sendable {
    /// The NOTIFY channel the relay listens on.
    static let channel = "rescind_outbox"
    static let signer = "grant-service"

    let signingKey: Ed25519.PrivateKey
    let topicPrefix: String

    /// - Returns: the signed envelope written.
    @discardableResult
    func enqueue<Payload: Codable & Sendable>(
        _ payload: Payload, schema: String, topic: Topic, key: UUID, on connection: PostgresConnection
    ) async throws -> Data {
        let message = try SignedMessage(schema: schema, signer: Self.signer, payload: payload, key: signingKey)
        let bytes = try message.encoded()
        let trace = ServiceContext.current?.traceContext
        try await connection.execute(
            """
            INSERT INTO outbox (topic, message_key, payload, traceparent, tracestate)
            VALUES (\(topicPrefix + topic.rawValue), \(key.uuidString.lowercased()), \(bytes), \(trace?.traceparent),
                    \(trace?.storableTraceState))
            """)
        // Delivered at COMMIT only, and deduplicated per transaction by PostgreSQL.
        try await connection.execute("SELECT pg_notify(\(Self.channel), '')")
        return bytes
    }

    func revocation(_ event: RevocationEvent, on connection: PostgresConnection) async throws {
        try await enqueue(
            event, schema: RevocationEvent.schema, topic: .revocationEvents, key: event.familyMemberID, on: connection)
    }

    /// Publishes the commands and keeps their envelopes for the devices (`device_commands`), which
    /// fetch what they missed at check-in (`DeviceCommandStore`): signed one by one, written in
    /// three statements whatever their number (outbox rows in array order, one NOTIFY, the kept
    /// envelopes), not three per command — each statement is a round trip inside the commit.
    func commands(_ commands: [DeviceCommand], on connection: PostgresConnection) async throws {
        guard !commands.isEmpty else { return }
        let envelopes = try commands.map {
            try SignedMessage(schema: DeviceCommand.schema, signer: Self.signer, payload: $0, key: signingKey).encoded()
        }
        let topic = topicPrefix + Topic.deviceCommands.rawValue
        let trace = ServiceContext.current?.traceContext
        try await connection.execute(
            """
            INSERT INTO outbox (topic, message_key, payload, traceparent, tracestate)
            SELECT \(topic), m.key, m.payload, \(trace?.traceparent), \(trace?.storableTraceState)
            FROM unnest(\(PostgresArray(commands.map { $0.deviceID.uuidString.lowercased() })), \(PostgresArray(envelopes)))
                 WITH ORDINALITY AS m (key, payload, position)
            ORDER BY m.position
            """)
        try await connection.execute("SELECT pg_notify(\(Self.channel), '')")
        try await DeviceCommandStore.keep(commands, envelopes: envelopes, traceparent: trace?.traceparent, on: connection)
    }

    func access(_ event: AccessEvent, on connection: PostgresConnection) async throws {
        try await enqueue(
            event, schema: AccessEvent.schema, topic: .accessEvents, key: event.familyMemberID, on: connection)
    }
}
