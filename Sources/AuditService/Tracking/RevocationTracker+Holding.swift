import Foundation
import RescindCrypto
import RescindPostgres
import RescindProtocol

/// How many acks the service holds before their revocation event arrives (`pending_acks`).
///
/// Until the event names the expected devices and their keys, a held ack is unverified: anyone
/// who can write to `device_acks` can make one, claiming any device and event. So the hold is
/// bounded per claimed device and in all, each ack at most `maxEnvelopeBytes`, and one more
/// evicts the oldest. An ack that a key the service already knows for its claimed device (from
/// any earlier revocation that listed it) verifies is evicted last: nobody without that
/// device's key can push it out, however many acks they send. A device no revocation has listed
/// yet has no known key, and its ack can be pushed out by a flood larger than the hold that
/// arrives before its event. An evicted ack is quarantined as `held_ack_evicted` at its
/// position (counted, and stored within the quarantine's bounds); if it was genuine, its device
/// shows as overdue at the deadline and is re-issued its command, whose answer completes the
/// revocation: late, not lost.
struct HeldAckLimits: Sendable {
    /// A genuine ack is under 3 KiB (its longest field, `error`, is 500 characters); an ack
    /// envelope larger than this is refused as `oversized` before it is decoded.
    static let maxEnvelopeBytes = 16 * 1024
    /// `RESCIND_AUDIT_HELD_ACKS_PER_DEVICE`.
    var perDevice = 16
    /// `RESCIND_AUDIT_HELD_ACKS_MAX`.
    var total = 10_000
}

extension RevocationTracker {
    /// Holds an ack whose revocation is not known yet, evicting beyond the limits.
    func hold(
        _ message: SignedMessage<DeviceAck>, bytes: Data, at position: MessagePosition, on connection: PostgresConnection,
        into conclusions: inout Conclusions
    ) async throws {
        let ack = message.payload
        let knownKeys = try await connection.query(
            "SELECT DISTINCT signing_public_key FROM revocation_devices WHERE device_id = \(ack.deviceID) LIMIT 8"
        ).map { try $0.decode([UInt8].self, column: 0) }
        let verified = knownKeys.contains { raw in
            guard let key = try? Ed25519.PublicKey(rawRepresentation: raw) else { return false }
            return (try? message.verify(key: key)) != nil
        }
        let inserted = try await connection.execute(
            """
            INSERT INTO pending_acks (topic, partition, kafka_offset, event_id, envelope, device_id, key_verified)
            VALUES (\(position.topic), \(position.partition), \(position.offset), \(ack.eventID), \(bytes),
                    \(ack.deviceID), \(verified))
            ON CONFLICT DO NOTHING
            """)
        guard inserted == 1 else { return }
        // Kept: verified first, then newest first.
        let beyondDevice = try await connection.query(
            """
            DELETE FROM pending_acks WHERE (topic, partition, kafka_offset) IN (
                SELECT topic, partition, kafka_offset FROM pending_acks WHERE device_id = \(ack.deviceID)
                ORDER BY key_verified DESC, received_at DESC, kafka_offset DESC OFFSET \(heldAcks.perDevice))
            RETURNING topic, partition, kafka_offset, event_id, envelope
            """)
        try await quarantineEvicted(beyondDevice, cause: "device_limit", on: connection, into: &conclusions)
        let held = try await connection.query("SELECT count(*) FROM pending_acks").first!.decode(Int.self, column: 0)
        guard held > heldAcks.total else { return }
        let beyondTotal = try await connection.query(
            """
            DELETE FROM pending_acks WHERE (topic, partition, kafka_offset) IN (
                SELECT topic, partition, kafka_offset FROM pending_acks
                ORDER BY key_verified, received_at, kafka_offset LIMIT \(held - heldAcks.total))
            RETURNING topic, partition, kafka_offset, event_id, envelope
            """)
        try await quarantineEvicted(beyondTotal, cause: "total_limit", on: connection, into: &conclusions)
    }

    private func quarantineEvicted(
        _ rows: [PostgresRow], cause: String, on connection: PostgresConnection, into conclusions: inout Conclusions
    ) async throws {
        for row in rows {
            let (topic, partition, offset, eventID, envelope) = try row.decode(
                String.self, Int32.self, Int64.self, UUID.self, Data.self)
            let claimed = (try? Self.decodeAck(envelope))?.payload
            conclusions.evictedHeldAcks.append(cause)
            try await rejections.record(
                Rejection(
                    "held_ack_evicted", signer: claimed.map { Self.signer(of: $0.deviceID) }, eventID: eventID,
                    deviceID: claimed?.deviceID),
                at: MessagePosition(topic: topic, partition: partition, offset: offset), envelope: envelope,
                on: connection, into: &conclusions)
        }
    }
}
