import GRDB

extension AgentStore {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            // One row per family member this device holds (or held): the FMK wrapped under the
            // storage key, its version, and the highest version ever seen, below which the
            // agent never goes. `wrapped_fmk` is NULL and `status` 'revoked' after erasure.
            try db.execute(
                sql: """
                    CREATE TABLE family_members (
                        family_member_id TEXT PRIMARY KEY,
                        status TEXT NOT NULL CHECK (status IN ('active', 'revoked')),
                        fmk_version INTEGER NOT NULL,
                        version_floor INTEGER NOT NULL,
                        wrapped_fmk BLOB,
                        sync_cursor INTEGER NOT NULL DEFAULT 0,
                        updated_at REAL NOT NULL,
                        CHECK (fmk_version <= version_floor),
                        CHECK ((status = 'active') = (wrapped_fmk IS NOT NULL))
                    );
                    -- Records as the grant service stores them (AES-256-GCM under the FMK);
                    -- fmk_version 0 marks a record erased under an ephemeral key.
                    CREATE TABLE records (
                        record_id TEXT PRIMARY KEY,
                        family_member_id TEXT NOT NULL REFERENCES family_members ON DELETE CASCADE,
                        fmk_version INTEGER NOT NULL,
                        nonce BLOB NOT NULL,
                        ciphertext BLOB NOT NULL,
                        tag BLOB NOT NULL,
                        change_seq INTEGER NOT NULL
                    );
                    CREATE INDEX records_by_family_member ON records (family_member_id);
                    -- The command inbox: a verified command is stored before its Kafka offset is
                    -- committed, and completed in the same transaction as its effect and its ack.
                    CREATE TABLE commands (
                        command_id TEXT PRIMARY KEY,
                        event_id TEXT NOT NULL,
                        device_id TEXT NOT NULL,
                        action TEXT NOT NULL,
                        family_member_id TEXT NOT NULL,
                        fmk_version INTEGER NOT NULL,
                        issued_at REAL NOT NULL,
                        received_at REAL NOT NULL,
                        state TEXT NOT NULL CHECK (state IN ('pending', 'done')),
                        outcome TEXT,
                        records_processed INTEGER,
                        error TEXT,
                        completed_at REAL,
                        offset_committed INTEGER NOT NULL DEFAULT 0
                    );
                    -- Signed acks owed to device_acks, until the broker acknowledged them.
                    CREATE TABLE ack_outbox (
                        ack_id TEXT PRIMARY KEY,
                        command_id TEXT NOT NULL,
                        message BLOB NOT NULL,
                        created_at REAL NOT NULL,
                        sent_at REAL
                    );
                    CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
                    -- Work to finish after a crash (e.g. 'vacuum' after an erasure).
                    CREATE TABLE maintenance (task TEXT PRIMARY KEY);
                    """)
        }
        migrator.registerMigration("v2-sealed-inbox") { db in
            // Commands a locked agent received, each sealed (crypto_box_seal) to the device's
            // inbox public key: the command, and for an erasure done while locked what it did
            // (the draft of its ack). Opened, moved into `commands` and signed at unlock.
            try db.execute(
                sql: """
                    CREATE TABLE sealed_inbox (
                        seq INTEGER PRIMARY KEY AUTOINCREMENT,
                        sealed BLOB NOT NULL,
                        received_at REAL NOT NULL,
                        offset_committed INTEGER NOT NULL DEFAULT 0
                    );
                    """)
        }
        migrator.registerMigration("v3-at-rest") { db in
            // `at_rest` 1: the row holds the record sealed again under the database key
            // (`AtRestLayer`). `settings.at_rest` says how new rows are written.
            try db.execute(
                sql: """
                    ALTER TABLE records ADD COLUMN at_rest INTEGER NOT NULL DEFAULT 0;
                    CREATE TABLE settings (name TEXT PRIMARY KEY, value TEXT NOT NULL);
                    """)
        }
        migrator.registerMigration("v4-incoming-records") { db in
            // A rotation longer than one page stages its verified records here, page by page
            // (one download id per download), and swaps them into `records` in its final
            // transaction; never read otherwise, emptied when the agent starts.
            try db.execute(
                sql: """
                    CREATE TABLE incoming_records (
                        download_id TEXT NOT NULL,
                        family_member_id TEXT NOT NULL,
                        record_id TEXT NOT NULL,
                        fmk_version INTEGER NOT NULL,
                        nonce BLOB NOT NULL,
                        ciphertext BLOB NOT NULL,
                        tag BLOB NOT NULL,
                        change_seq INTEGER NOT NULL,
                        at_rest INTEGER NOT NULL,
                        PRIMARY KEY (download_id, record_id)
                    );
                    """)
        }
        migrator.registerMigration("v5-command-source") { db in
            // Where a command came from: 'kafka' (device_commands) or 'check_in' (fetched from
            // the grant service's copy, GET /v1/devices/self/commands, after missing it on the
            // topic). `settings.command_cursor` is the last position fetched.
            // A re-issue ('reissue', signed by the audit service) is a new entry for the grant
            // service's command it names (`original_command_id`), with its `attempt`.
            try db.execute(
                sql: """
                    ALTER TABLE commands ADD COLUMN source TEXT NOT NULL DEFAULT 'kafka';
                    ALTER TABLE commands ADD COLUMN original_command_id TEXT;
                    ALTER TABLE commands ADD COLUMN attempt INTEGER;
                    """)
        }
        migrator.registerMigration("v6-receipts") { db in
            // Receipts (`delivered`, `not_now`, signed by the receipt key) go out through the ack
            // outbox with the answers, marked apart: `owedAcks` and the status's ack counts are
            // answers (and violation reports) only.
            try db.execute(sql: "ALTER TABLE ack_outbox ADD COLUMN kind TEXT NOT NULL DEFAULT 'ack'")
        }
        migrator.registerMigration("v7-governance-notices") { db in
            // Governance notices the grant service addressed to this device (signed, verified on
            // arrival): what `rescind-agent pending` shows even if the service later lists it no
            // more. Identifiers and times only.
            try db.execute(
                sql: """
                    CREATE TABLE governance_notices (
                        notice_id TEXT PRIMARY KEY,
                        operation_id TEXT,
                        change TEXT NOT NULL,
                        state TEXT NOT NULL,
                        occurred_at REAL NOT NULL,
                        notice BLOB NOT NULL,
                        received_at REAL NOT NULL
                    );
                    CREATE INDEX governance_notices_by_operation ON governance_notices (operation_id, occurred_at);
                    """)
        }
        migrator.registerMigration("v8-trace-context") { db in
            // The trace a command continues (W3C `traceparent`, `tracestate`): its `command
            // received` span at first, its handling's span once done, which the ack's `ack
            // published` span continues. NULL when tracing is off or the message carried none.
            try db.execute(
                sql: """
                    ALTER TABLE commands ADD COLUMN traceparent TEXT;
                    ALTER TABLE commands ADD COLUMN tracestate TEXT;
                    """)
        }
        return migrator
    }
}
