import Foundation
import RescindPostgres
import RescindServiceSupport

/// The monitoring page's summary: how many expected devices stand in each state across the
/// revocations a caller may see, and the commit-to-last-ack times of the completed ones.
///
/// The states come from `DeviceAckState.allCases` (every state the tracker knows, listed even at
/// zero) and from the stored rows (so a state added to the tracker shows up without a change here).
struct MonitoringSummary: Encodable, Sendable {
    struct StateCount: Encodable, Sendable, Equatable {
        let state: String
        let count: Int
        /// The page highlights it: the device owes an answer (overdue) or holds one back (not now).
        let attention: Bool
    }

    struct AckTimes: Encodable, Sendable, Equatable {
        /// Completed revocations measured.
        let completed: Int
        let p50Ms: Int64?
        let p99Ms: Int64?

        enum CodingKeys: CodingKey {
            case completed, p50Ms, p99Ms
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(completed, forKey: .completed)
            try container.encode(p50Ms, forKey: .p50Ms)
            try container.encode(p99Ms, forKey: .p99Ms)
        }
    }

    let states: [StateCount]
    let ackTimes: AckTimes

    /// States the page highlights, whichever of them the tracker has.
    static let attentionStates: Set<String> = ["overdue", "not_now"]

    /// Every state a device can be in, in the tracker's order.
    static var knownStates: [String] { DeviceAckState.allCases.map(\.rawValue) }

    /// A `state` filter from a query: one of `knownStates`, or a 400 naming them.
    static func state(_ text: Substring?) throws -> String? {
        guard let text else { return nil }
        guard knownStates.contains(String(text)) else {
            throw APIError.badRequest("state must be one of \(knownStates.joined(separator: ", "))")
        }
        return String(text)
    }

    /// Scoped like `RevocationRecord.statuses`: one family member, an owner's, or all.
    static func load(familyMemberID: UUID?, ownerUserID: UUID?, on connection: PostgresConnection) async throws -> MonitoringSummary {
        var counts: [String: Int] = [:]
        for row in try await connection.query(
            """
            SELECT d.state, count(*) FROM revocation_devices d JOIN revocations r USING (event_id)
            WHERE (\(familyMemberID)::uuid IS NULL OR r.family_member_id = \(familyMemberID))
              AND (\(ownerUserID)::uuid IS NULL OR r.family_member_id IN (
                    SELECT f.family_member_id FROM family_members f WHERE f.owner_user_id = \(ownerUserID)))
            GROUP BY d.state
            """)
        {
            let (state, count) = try row.decode(String.self, Int.self)
            counts[state] = count
        }
        let known = knownStates
        let ordered = known + counts.keys.filter { !known.contains($0) }.sorted()
        let row = try await connection.query(
            """
            SELECT count(*), percentile_disc(0.5) WITHIN GROUP (ORDER BY r.commit_to_last_ack_ms),
                   percentile_disc(0.99) WITHIN GROUP (ORDER BY r.commit_to_last_ack_ms)
            FROM revocations r WHERE r.commit_to_last_ack_ms IS NOT NULL AND (\(familyMemberID)::uuid IS NULL OR r.family_member_id = \(familyMemberID))
              AND (\(ownerUserID)::uuid IS NULL OR r.family_member_id IN (
                    SELECT f.family_member_id FROM family_members f WHERE f.owner_user_id = \(ownerUserID)))
            """
        ).first!
        let (completed, p50, p99) = try row.decode(Int.self, Int64?.self, Int64?.self)
        return MonitoringSummary(
            states: ordered.map { StateCount(state: $0, count: counts[$0] ?? 0, attention: attentionStates.contains($0)) },
            ackTimes: AckTimes(completed: completed, p50Ms: p50, p99Ms: p99))
    }

    /// The completed revocations' commit times and commit-to-last-ack times, the newest `limit`, oldest first.
    static func ackTimes(
        familyMemberID: UUID?, ownerUserID: UUID?, limit: Int = 500, on connection: PostgresConnection
    ) async throws -> [AckTimePlot.Point] {
        let newestFirst = try await connection.query(
            """
            SELECT r.committed_at, r.commit_to_last_ack_ms FROM revocations r
            WHERE r.commit_to_last_ack_ms IS NOT NULL AND (\(familyMemberID)::uuid IS NULL OR r.family_member_id = \(familyMemberID))
              AND (\(ownerUserID)::uuid IS NULL OR r.family_member_id IN (
                    SELECT f.family_member_id FROM family_members f WHERE f.owner_user_id = \(ownerUserID)))
            ORDER BY r.committed_at DESC LIMIT \(limit)
            """
        ).map { row in
            let (committedAt, ms) = try row.decode(Date.self, Int64.self)
            return AckTimePlot.Point(committedAt: committedAt, milliseconds: ms)
        }
        return Array(newestFirst.reversed())
    }
}
