import Foundation
import GRDB

/// Persistent counters (rejected messages, self-heal actions) that `status` reports.
extension AgentStore {
    func increment(_ counter: String) async throws {
        _ = try await write { db in
            try db.execute(
                sql: "INSERT INTO counters (name, value) VALUES (?, 1) ON CONFLICT (name) DO UPDATE SET value = value + 1",
                arguments: [counter])
        }
    }

    /// Adds several counts in one transaction.
    func increment(_ counts: [String: Int]) async throws {
        guard !counts.isEmpty else { return }
        _ = try await write { db in
            for (name, value) in counts {
                try db.execute(
                    sql: "INSERT INTO counters (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = value + excluded.value",
                    arguments: [name, value])
            }
        }
    }

    func counters() async throws -> [String: Int] {
        try await read { db in
            Dictionary(uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT name, value FROM counters").map {
                ($0["name"] as String, $0["value"] as Int)
            })
        }
    }
}
