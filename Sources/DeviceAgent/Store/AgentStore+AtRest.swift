import Foundation
import GRDB

/// Turning at-rest encryption of the record cache on or off, in place.
extension AgentStore {
    func atRestEnabled() async throws -> Bool {
        try await read { db in try Self.atRestEnabled(in: db) }
    }

    /// Seals every cached record under `layer` (on) or opens every sealed one back to the
    /// grant service's form (off), and records the setting, all in one transaction: a crash
    /// leaves the old state. Erased rows are left alone (no key opens them). A VACUUM
    /// follows so that no free page keeps a row's former form.
    /// - Returns: the number of records migrated (0 when already in that state).
    func setAtRest(_ enabled: Bool, layer: AtRestLayer) async throws -> Int {
        let migrated = try await write { db -> Int in
            let rows = try Row.fetchAll(
                db, sql: "SELECT * FROM records WHERE at_rest = ? AND fmk_version <> 0", arguments: [!enabled])
            for row in rows {
                let record = try Self.cachedRecord(row, atRest: layer)
                let stored =
                    enabled
                    ? try layer.seal(nonce: record.nonce, ciphertext: record.ciphertext, tag: record.tag, recordID: record.recordID)
                    : (record.nonce, record.ciphertext, record.tag)
                try db.execute(
                    sql: "UPDATE records SET nonce = ?, ciphertext = ?, tag = ?, at_rest = ? WHERE record_id = ?",
                    arguments: [stored.0, stored.1, stored.2, enabled, record.recordID.text])
            }
            try db.execute(
                sql: "INSERT INTO settings (name, value) VALUES ('at_rest', ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                arguments: [enabled ? "on" : "off"])
            if !rows.isEmpty { try db.execute(sql: "INSERT OR IGNORE INTO maintenance (task) VALUES ('vacuum')") }
            return rows.count
        }
        try await vacuumIfNeeded()
        return migrated
    }
}
