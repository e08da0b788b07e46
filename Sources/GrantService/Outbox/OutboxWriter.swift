import Foundation
import RescindCrypto
import RescindPostgres
import RescindProtocol

/// Writes signed messages into the outbox inside the caller's transaction, so
/// that a message exists if and only if the change it announces committed.
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
        try await connection.execute(
            """
            INSERT INTO outbox (topic, message_key, payload)
            VALUES (\(topicPrefix + topic.rawValue), \(key.uuidString.lowercased()), \(bytes))
            """)
        // Delivered at COMMIT only, and deduplicated per transaction by PostgreSQL.
        try await connection.execute("SELECT pg_notify(\(Self.channel), '')")
        return bytes
    }

    func revocation(_ event: RevocationEvent, on connection: PostgresConnection) async throws {
        try await enqueue(
            event, schema: RevocationEvent.schema, topic: .revocationEvents, key: event.familyMemberID, on: connection)
    }

    /// Publishes the command and keeps its envelope for the device (`device_commands`), which
    /// fetches what it missed at check-in (`DeviceCommandStore`).
    func command(_ command: DeviceCommand, on connection: PostgresConnection) async throws {
        let envelope = try await enqueue(
            command, schema: DeviceCommand.schema, topic: .deviceCommands, key: command.deviceID, on: connection)
        try await DeviceCommandStore.keep(command, envelope: envelope, on: connection)
    }

    func access(_ event: AccessEvent, on connection: PostgresConnection) async throws {
        try await enqueue(
            event, schema: AccessEvent.schema, topic: .accessEvents, key: event.familyMemberID, on: connection)
    }
}
