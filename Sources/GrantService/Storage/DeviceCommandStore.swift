import Foundation
import RescindPostgres
import RescindProtocol

/// Every signed command each device was sent (`device_commands`, migration 0010), for the
/// device to fetch what it missed at check-in. Only the device itself reads its commands.
struct DeviceCommandStore: Sendable {
    let pool: PostgresConnectionPool

    /// Keeps the envelope of each command (same order), inside the caller's (the commit's)
    /// transaction, in one statement, with the `traceparent` of the commit's trace (`nil`: untraced).
    static func keep(
        _ commands: [DeviceCommand], envelopes: [Data], traceparent: String?, on connection: PostgresConnection
    ) async throws {
        precondition(commands.count == envelopes.count, "one envelope per command")
        try await connection.execute(
            """
            INSERT INTO device_commands (command_id, device_id, event_id, envelope, traceparent)
            SELECT c.command_id, c.device_id, c.event_id, c.envelope, \(traceparent)
            FROM unnest(\(PostgresArray(commands.map(\.commandID))), \(PostgresArray(commands.map(\.deviceID))),
                        \(PostgresArray(commands.map(\.eventID))), \(PostgresArray(envelopes)))
                 WITH ORDINALITY AS c (command_id, device_id, event_id, envelope, position)
            ORDER BY c.position
            """)
    }

    /// The device's commands after position `after`, oldest first.
    func commands(of deviceID: UUID, after: Int64, limit: Int) async throws -> DeviceCommandList {
        try await pool.withConnection { connection in
            let rows = try await connection.query(
                """
                SELECT seq, command_id, envelope, traceparent FROM device_commands
                WHERE device_id = \(deviceID) AND seq > \(after) ORDER BY seq LIMIT \(limit)
                """)
            return DeviceCommandList(
                commands: try rows.map { row in
                    let (seq, commandID, envelope, traceparent) = try row.decode(Int64.self, UUID.self, Data.self, String?.self)
                    return DeviceCommandList.Entry(seq: seq, commandID: commandID, envelope: envelope, traceparent: traceparent)
                })
        }
    }
}
