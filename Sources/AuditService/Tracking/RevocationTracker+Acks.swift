import Foundation
import RescindPostgres
import RescindProtocol

extension RevocationTracker {
    /// Decodes an ack envelope; its signature can only be checked once the revocation
    /// (which carries the device's key) is known.
    static func decodeAck(_ bytes: Data?) throws -> SignedMessage<DeviceAck> {
        guard let bytes else { throw Rejection(MessageError.malformed) }
        let message: SignedMessage<DeviceAck>
        do {
            message = try SignedMessage<DeviceAck>.decode(bytes, schema: DeviceAck.schema)
        } catch let error as MessageError {
            throw Rejection(error)
        }
        guard message.signer == expectedSigner(of: message.payload) else {
            throw Rejection(
                MessageError.unknownSigner("").code, signer: message.signer, eventID: message.payload.eventID,
                deviceID: message.payload.deviceID)
        }
        return message
    }

    /// Applies an ack read from Kafka, or holds it (unverified) when its revocation event
    /// has not been seen yet: the two travel on different topics, in no common order.
    func receive(
        _ bytes: Data?, at position: MessagePosition, on connection: PostgresConnection,
        into conclusions: inout Conclusions
    ) async throws {
        // Cheap before anything is decoded: no genuine ack comes near this size.
        if let bytes, bytes.count > HeldAckLimits.maxEnvelopeBytes { throw Rejection("oversized") }
        let message = try Self.decodeAck(bytes)
        guard let revocation = try await RevocationRecord.load(message.payload.eventID, lock: true, on: connection) else {
            try await hold(message, bytes: bytes ?? Data(), at: position, on: connection, into: &conclusions)
            return
        }
        if try await apply(message, to: revocation, on: connection, into: &conclusions) {
            try await Self.streamStatus(of: revocation.eventID, on: connection, into: &conclusions)
        }
    }

    /// Verifies and applies the acks held for `revocation` (locked by the caller), rejecting
    /// those that fail, each at its own message position.
    func applyHeldAcks(
        for revocation: RevocationRecord, on connection: PostgresConnection, into conclusions: inout Conclusions
    ) async throws {
        let held = try await connection.query(
            """
            DELETE FROM pending_acks WHERE event_id = \(revocation.eventID)
            RETURNING topic, partition, kafka_offset, envelope
            """
        ).map { try $0.decode(String.self, Int32.self, Int64.self, Data.self) }
        for (topic, partition, offset, envelope) in held.sorted(by: { ($0.1, $0.2) < ($1.1, $1.2) }) {
            let position = MessagePosition(topic: topic, partition: partition, offset: offset)
            // Each held ack in a savepoint: one that cannot be stored is quarantined on its own
            // and never fails the revocation event (or the scan) that releases it.
            let before = conclusions
            try await connection.execute("SAVEPOINT held_ack")
            do {
                let message = try Self.decodeAck(envelope)
                // Reload: an earlier held ack may have completed the revocation.
                let current = try await RevocationRecord.load(revocation.eventID, on: connection) ?? revocation
                _ = try await apply(message, to: current, on: connection, into: &conclusions)
                try await connection.execute("RELEASE SAVEPOINT held_ack")
            } catch let rejection as Rejection {
                try await connection.execute("ROLLBACK TO SAVEPOINT held_ack")
                conclusions = before
                try await rejections.record(rejection, at: position, envelope: envelope, on: connection, into: &conclusions)
            } catch {
                guard case .content(let reason) = HandlingFailure.classify(error) else { throw error }
                try await connection.execute("ROLLBACK TO SAVEPOINT held_ack")
                conclusions = before
                try await rejections.record(
                    Rejection(reason, familyMemberID: revocation.familyMemberID, eventID: revocation.eventID),
                    at: position, envelope: envelope, on: connection, into: &conclusions)
            }
        }
        if !held.isEmpty { try await Self.streamStatus(of: revocation.eventID, on: connection, into: &conclusions) }
    }

    /// Held acks whose revocation arrived meanwhile (written by another replica at the
    /// same moment) are applied; those older than `lifetime` are rejected as
    /// `unknown_revocation`. Run periodically.
    func sweepHeldAcks(lifetime: Duration, on connection: PostgresConnection, into conclusions: inout Conclusions) async throws {
        let ready = try await connection.query(
            "SELECT DISTINCT p.event_id FROM pending_acks p JOIN revocations r ON r.event_id = p.event_id"
        ).map { try $0.decode(UUID.self, column: 0) }
        for eventID in ready {
            if let revocation = try await RevocationRecord.load(eventID, lock: true, on: connection) {
                try await applyHeldAcks(for: revocation, on: connection, into: &conclusions)
            }
        }
        let expired = try await connection.query(
            """
            DELETE FROM pending_acks WHERE received_at < now() - make_interval(secs => \(lifetime.seconds))
            RETURNING topic, partition, kafka_offset, event_id, envelope
            """
        ).map { try $0.decode(String.self, Int32.self, Int64.self, UUID.self, Data.self) }
        for (topic, partition, offset, eventID, envelope) in expired {
            let signer = (try? Self.decodeAck(envelope))?.signer
            try await rejections.record(
                Rejection("unknown_revocation", signer: signer, eventID: eventID),
                at: MessagePosition(topic: topic, partition: partition, offset: offset), envelope: envelope,
                on: connection, into: &conclusions)
        }
    }

    static func streamStatus(of eventID: UUID, on connection: PostgresConnection, into conclusions: inout Conclusions) async throws {
        guard let status = try await RevocationRecord.status(eventID, on: connection) else { return }
        conclusions.streamEvents.append(try StreamEvent(.revocation, familyMemberID: status.familyMemberID, payload: status))
    }
}
