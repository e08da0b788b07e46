import Foundation
import RescindClient
import RescindCrypto
import RescindPostgres

/// Issue 19, item 2: the revocation's write path in PostgreSQL, today's design against a
/// write-once prototype and a binary COPY of the same bytes, in the same run.
///
/// Today: the upload COPYs every re-encrypted record (2 KiB body) into `staged_records`; the
/// commit rewrites each `records` row from it (`UPDATE … FROM staged_records`) and deletes the
/// staging — every body written twice, the old rows' pages logged whole after a checkpoint.
/// Write-once (prototype tables `bench_wo_*`, not the product's schema): bodies live in a table
/// of their own and are written once, by the upload; the staging keeps narrow rows naming each
/// record's new body; the commit switches the narrow record rows to the new bodies and leaves
/// the old bodies' ids for a cleanup that runs after the commit (timed apart).
///
/// Both run the product's own statements (the no-lost-edit check, the swap, the version bump,
/// the staging's deletion) on the bench's grant schema, uploads in the service's batches, each
/// phase after a CHECKPOINT (the records are old: their pages are logged whole when first
/// touched, as in steady state). Not the HTTP path: section 2 measures that.
enum WriteOnceBench {
    private struct Phase {
        var seconds: Double
        var walBytes: Double
    }

    private struct Run {
        var copy: Phase
        var todayUpload: Phase, todayCommit: Phase
        var onceUpload: Phase, onceCommit: Phase, onceCleanup: Phase
        var todayRead: Double, onceRead: Double
        var today: Double { todayUpload.seconds + todayCommit.seconds }
        var once: Double { onceUpload.seconds + onceCommit.seconds }
    }

    static func run(stack: BenchStack, options: BenchOptions, report: BenchReport) async throws {
        report.begin("Issue 19, item 2: the revocation's write path in PostgreSQL (\(options.recordBytes)-byte records)")
        let owner = try await stack.register("Write-once owner")
        try await stack.withConnection { connection in
            try await connection.executeScript(
                """
                DROP TABLE IF EXISTS bench_wo_staged, bench_wo_records, bench_wo_bodies, bench_wo_garbage, bench_wo_copy;
                CREATE TABLE bench_wo_copy (LIKE records INCLUDING ALL,
                    FOREIGN KEY (family_member_id, fmk_version)
                        REFERENCES family_members (family_member_id, current_fmk_version) DEFERRABLE INITIALLY DEFERRED);
                ALTER TABLE bench_wo_copy SET (toast_tuple_target = 8160);
                -- Bodies, written once and never updated.
                CREATE TABLE bench_wo_bodies (
                    body_id    uuid PRIMARY KEY,
                    nonce      bytea NOT NULL CHECK (length(nonce) = 12),
                    ciphertext bytea NOT NULL CHECK (length(ciphertext) <= 1048576),
                    tag        bytea NOT NULL CHECK (length(tag) = 16));
                ALTER TABLE bench_wo_bodies SET (toast_tuple_target = 8160);
                ALTER TABLE bench_wo_bodies ALTER COLUMN ciphertext SET STORAGE MAIN;
                -- `records` without the body: the same keys, indexes and deferred version check.
                CREATE TABLE bench_wo_records (
                    record_id        uuid PRIMARY KEY,
                    family_member_id uuid NOT NULL REFERENCES family_members (family_member_id),
                    fmk_version      integer NOT NULL,
                    body_id          uuid NOT NULL,
                    change_seq       bigint NOT NULL DEFAULT nextval('record_change_seq'),
                    updated_at       timestamptz NOT NULL DEFAULT now(),
                    FOREIGN KEY (family_member_id, fmk_version)
                        REFERENCES family_members (family_member_id, current_fmk_version) DEFERRABLE INITIALLY DEFERRED);
                CREATE INDEX bench_wo_records_by_family_member ON bench_wo_records (family_member_id, record_id);
                CREATE UNIQUE INDEX bench_wo_records_by_change ON bench_wo_records (change_seq);
                CREATE INDEX bench_wo_records_by_family_member_change ON bench_wo_records (family_member_id, change_seq);
                CREATE TABLE bench_wo_staged (
                    staging_id        uuid NOT NULL REFERENCES revocation_stagings (staging_id) ON DELETE CASCADE,
                    record_id         uuid NOT NULL,
                    source_change_seq bigint NOT NULL,
                    body_id           uuid NOT NULL,
                    PRIMARY KEY (staging_id, record_id));
                CREATE TABLE bench_wo_garbage (body_id uuid NOT NULL);
                """)
        }

        var medians: [(size: Int, today: Double, once: Double, copy: Double)] = []
        for size in options.commitSizes {
            let runs = size > 10_000 ? min(options.largeCommitRuns, options.runs) : options.runs
            var results: [Run] = []
            for index in 0..<runs {
                let result = try await measure(size: size, owner: owner, stack: stack, options: options, todayFirst: index % 2 == 0)
                results.append(result)
                BenchReport.log(
                    "\(size) records, run \(index + 1): COPY \(text(result.copy)); "
                        + "today upload \(text(result.todayUpload)) + commit \(text(result.todayCommit)); "
                        + "write-once upload \(text(result.onceUpload)) + commit \(text(result.onceCommit)), "
                        + "cleanup afterwards \(text(result.onceCleanup)); change feed read: today "
                        + "\(Format.duration(result.todayRead)), write-once \(Format.duration(result.onceRead))")
            }
            func median(_ value: (Run) -> Double) -> Double { Statistics.median(results.map(value)) }
            let copy = median(\.copy.seconds)
            let today = median(\.today)
            let once = median(\.once)
            medians.append((size, today, once, copy))
            let n = Double(size)
            let label = "\(Format.grouped(n)) records (median of \(runs))"
            report.add("\(label): today, upload + commit", project: .rate(n / today, "records"), baseline: .rate(n / copy, "records"))
            report.add("… write-once, upload + commit", project: .rate(n / once, "records"), baseline: .rate(n / copy, "records"))
            report.add(
                "… WAL written: today / write-once (upload + commit)",
                project: "\(mib(median { $0.todayUpload.walBytes + $0.todayCommit.walBytes })) / "
                    + mib(median { $0.onceUpload.walBytes + $0.onceCommit.walBytes }),
                baseline: "\(mib(median(\.copy.walBytes))) (COPY)")
            report.note(
                "\(Format.grouped(n)) records: today = upload \(Format.duration(median(\.todayUpload.seconds))) + commit "
                    + "\(Format.duration(median(\.todayCommit.seconds))) (WAL \(mib(median(\.todayUpload.walBytes))) + "
                    + "\(mib(median(\.todayCommit.walBytes)))); write-once = upload \(Format.duration(median(\.onceUpload.seconds))) "
                    + "+ commit \(Format.duration(median(\.onceCommit.seconds))) (WAL \(mib(median(\.onceUpload.walBytes))) + "
                    + "\(mib(median(\.onceCommit.walBytes)))), then the old bodies' cleanup "
                    + "\(Format.duration(median(\.onceCleanup.seconds))) (WAL \(mib(median(\.onceCleanup.walBytes)))) after the "
                    + "commit; COPY \(Format.duration(copy)) (WAL \(mib(median(\.copy.walBytes)))). Change feed read of every "
                    + "record: today \(Format.duration(median(\.todayRead))), write-once (joined to the bodies) "
                    + "\(Format.duration(median(\.onceRead))).")
        }
        for (previous, next) in zip(medians, medians.dropFirst()) {
            let span = "\(Format.grouped(Double(previous.size))) → \(Format.grouped(Double(next.size))) records"
            let copyGrowth = next.copy / previous.copy
            for (name, before, after) in [("today", previous.today, next.today), ("write-once", previous.once, next.once)] {
                let growth = after / before
                report.add(
                    "time growth \(span), \(name)",
                    project: String(format: "%.1f×", growth), baseline: String(format: "%.1f× (COPY)", copyGrowth),
                    ratio: String(format: "%.2f of COPY's growth", growth / copyGrowth))
            }
        }
        report.note(
            "Storage statements only, on the bench's grant schema: the upload in batches of \(options.uploadBatch) (one "
                + "transaction each), the commit as the product's (no-lost-edit check, swap, version bump, staging deleted). "
                + "Write-once: tables bench_wo_bodies (bodies written once), bench_wo_records (records without the body) and "
                + "bench_wo_staged (narrow staging rows); its commit switches record rows to the new bodies and queues the old "
                + "ones in bench_wo_garbage; the cleanup deletes them after the commit. A CHECKPOINT precedes every phase. "
                + "Baseline: one binary COPY of the same bytes into a table LIKE records, in one transaction.")
        try await stack.withConnection { connection in
            try await connection.executeScript(
                "DROP TABLE IF EXISTS bench_wo_staged, bench_wo_records, bench_wo_bodies, bench_wo_garbage, bench_wo_copy")
        }
    }

    private static func measure(
        size: Int, owner: UserSession, stack: BenchStack, options: BenchOptions, todayFirst: Bool
    ) async throws -> Run {
        let (todayFamily, _) = try await owner.createFamilyMember()
        let (onceFamily, _) = try await owner.createFamilyMember()
        let (copyFamily, _) = try await owner.createFamilyMember()
        let (todayIDs, boxes) = try RecordSeeder.seal(
            count: size, byteCount: options.recordBytes, fmk: SecretKey(), version: 1)
        let onceIDs = todayIDs.map { _ in UUID() }
        let oldBodies = todayIDs.map { _ in UUID() }
        let newBodies = todayIDs.map { _ in UUID() }
        return try await stack.withConnection { connection in
            // Seeding (not timed): the same bytes in both designs.
            try await connection.transaction { connection in
                try await RecordSeeder.copy(ids: todayIDs, boxes: boxes, familyMemberID: todayFamily, into: "records", on: connection)
                try await copyBodies(oldBodies, boxes, on: connection)
                try await connection.copyFrom(table: "bench_wo_records", columns: ["record_id", "family_member_id", "fmk_version", "body_id"]) {
                    writer in
                    for index in onceIDs.indices { try writer.append(onceIDs[index], onceFamily, Int32(1), oldBodies[index]) }
                }
            }
            for table in ["records", "bench_wo_records", "bench_wo_bodies", "staged_records", "bench_wo_staged"] {
                try await connection.execute("VACUUM ANALYZE \(identifier: table)")
            }
            let todayStaging = try await stage(todayFamily, owner: owner.keys.userID, records: "records", on: connection)
            let onceStaging = try await stage(onceFamily, owner: owner.keys.userID, records: "bench_wo_records", on: connection)

            let copy = try await phase(on: connection) {
                try await connection.execute("TRUNCATE bench_wo_copy")
                try await connection.transaction { connection in
                    try await RecordSeeder.copy(ids: todayIDs, boxes: boxes, familyMemberID: copyFamily, into: "bench_wo_copy", on: connection)
                }
            }
            var today: (upload: Phase, commit: Phase)!
            var once: (upload: Phase, commit: Phase, cleanup: Phase)!
            for design in todayFirst ? [true, false] : [false, true] {
                if design {
                    today = try await measureToday(todayFamily, todayStaging, todayIDs, boxes, options: options, on: connection)
                } else {
                    once = try await measureOnce(onceFamily, onceStaging, onceIDs, newBodies, boxes, options: options, on: connection)
                }
            }
            let (_, todayRead) = try await Timing.measure {
                try await connection.query(
                    "SELECT record_id, fmk_version, nonce, ciphertext, tag, change_seq FROM records WHERE family_member_id = \(todayFamily) ORDER BY change_seq")
            }
            let (_, onceRead) = try await Timing.measure {
                try await connection.query(
                    """
                    SELECT r.record_id, r.fmk_version, b.nonce, b.ciphertext, b.tag, r.change_seq
                    FROM bench_wo_records r JOIN bench_wo_bodies b USING (body_id)
                    WHERE r.family_member_id = \(onceFamily) ORDER BY r.change_seq
                    """)
            }
            // Leave nothing for the next size: the tables' growth would weigh on it.
            try await connection.execute("DELETE FROM records WHERE family_member_id = \(todayFamily)")
            try await connection.execute("DELETE FROM bench_wo_records WHERE family_member_id = \(onceFamily)")
            try await connection.execute("TRUNCATE bench_wo_bodies, bench_wo_garbage, bench_wo_copy")
            return Run(
                copy: copy, todayUpload: today.upload, todayCommit: today.commit, onceUpload: once.upload,
                onceCommit: once.commit, onceCleanup: once.cleanup, todayRead: todayRead, onceRead: onceRead)
        }
    }

    /// A revocation begun as `RevocationStore.begin` begins it.
    private static func stage(_ familyMember: UUID, owner: UUID, records: String, on connection: PostgresConnection) async throws -> UUID {
        let staging = UUID()
        try await connection.execute(
            """
            INSERT INTO revocation_stagings (staging_id, family_member_id, revoked_user_id, started_by_user_id,
                                             from_fmk_version, expected_count, begin_change_seq, expires_at)
            VALUES (\(staging), \(familyMember), \(owner), \(owner), 1,
                    (SELECT count(*) FROM \(identifier: records) WHERE family_member_id = \(familyMember)),
                    (SELECT coalesce(max(change_seq), 0) FROM \(identifier: records) WHERE family_member_id = \(familyMember)),
                    now() + interval '1 hour')
            """)
        return staging
    }

    private static func measureToday(
        _ familyMember: UUID, _ staging: UUID, _ ids: [UUID], _ boxes: [AESGCM.SealedBox], options: BenchOptions,
        on connection: PostgresConnection
    ) async throws -> (upload: Phase, commit: Phase) {
        let sources = try await changeSeqs(familyMember, records: "records", on: connection)
        let upload = try await phase(on: connection) {
            for batch in stride(from: 0, to: ids.count, by: options.uploadBatch).map({ $0..<min($0 + options.uploadBatch, ids.count) }) {
                try await connection.transaction { connection in
                    try await connection.copyFrom(
                        table: "staged_records",
                        columns: ["staging_id", "record_id", "source_change_seq", "nonce", "ciphertext", "tag"]
                    ) { writer in
                        for index in batch {
                            let box = boxes[index]
                            try writer.append(staging, ids[index], sources[ids[index]]!, box.nonce, box.ciphertext, box.tag)
                        }
                    }
                    try await connection.execute(
                        "UPDATE revocation_stagings SET staged_count = staged_count + \(batch.count) WHERE staging_id = \(staging)")
                }
            }
        }
        let commit = try await phase(on: connection) {
            try await connection.transaction { connection in
                try await connection.execute("SET LOCAL enable_nestloop = off")
                try await checkNoEditIsLost(familyMember, staging, records: "records", staged: "staged_records", on: connection)
                let swapped = try await connection.execute(
                    """
                    UPDATE records r
                    SET fmk_version = 2, nonce = s.nonce, ciphertext = s.ciphertext, tag = s.tag,
                        change_seq = nextval('record_change_seq'), updated_at = now()
                    FROM staged_records s
                    WHERE s.staging_id = \(staging) AND r.record_id = s.record_id
                      AND r.family_member_id = \(familyMember) AND r.change_seq = s.source_change_seq
                    """)
                guard swapped == ids.count else { throw BenchError("today's commit swapped \(swapped) of \(ids.count)") }
                try await bumpVersion(familyMember, staging, on: connection)
            }
        }
        return (upload, commit)
    }

    private static func measureOnce(
        _ familyMember: UUID, _ staging: UUID, _ ids: [UUID], _ bodies: [UUID], _ boxes: [AESGCM.SealedBox],
        options: BenchOptions, on connection: PostgresConnection
    ) async throws -> (upload: Phase, commit: Phase, cleanup: Phase) {
        let sources = try await changeSeqs(familyMember, records: "bench_wo_records", on: connection)
        let upload = try await phase(on: connection) {
            for batch in stride(from: 0, to: ids.count, by: options.uploadBatch).map({ $0..<min($0 + options.uploadBatch, ids.count) }) {
                try await connection.transaction { connection in
                    try await copyBodies(Array(bodies[batch]), Array(boxes[batch]), on: connection)
                    try await connection.copyFrom(
                        table: "bench_wo_staged", columns: ["staging_id", "record_id", "source_change_seq", "body_id"]
                    ) { writer in
                        for index in batch { try writer.append(staging, ids[index], sources[ids[index]]!, bodies[index]) }
                    }
                    try await connection.execute(
                        "UPDATE revocation_stagings SET staged_count = staged_count + \(batch.count) WHERE staging_id = \(staging)")
                }
            }
        }
        let commit = try await phase(on: connection) {
            try await connection.transaction { connection in
                try await connection.execute("SET LOCAL enable_nestloop = off")
                try await checkNoEditIsLost(familyMember, staging, records: "bench_wo_records", staged: "bench_wo_staged", on: connection)
                // The old bodies are queued before the switch (one narrow row each) and deleted after the commit.
                try await connection.execute(
                    """
                    INSERT INTO bench_wo_garbage (body_id)
                    SELECT r.body_id FROM bench_wo_records r JOIN bench_wo_staged s ON s.staging_id = \(staging) AND s.record_id = r.record_id
                    WHERE r.family_member_id = \(familyMember) AND r.change_seq = s.source_change_seq
                    """)
                let swapped = try await connection.execute(
                    """
                    UPDATE bench_wo_records r
                    SET fmk_version = 2, body_id = s.body_id, change_seq = nextval('record_change_seq'), updated_at = now()
                    FROM bench_wo_staged s
                    WHERE s.staging_id = \(staging) AND r.record_id = s.record_id
                      AND r.family_member_id = \(familyMember) AND r.change_seq = s.source_change_seq
                    """)
                guard swapped == ids.count else { throw BenchError("the write-once commit switched \(swapped) of \(ids.count)") }
                try await bumpVersion(familyMember, staging, on: connection)
            }
        }
        let cleanup = try await phase(on: connection) {
            try await connection.transaction { connection in
                try await connection.execute("DELETE FROM bench_wo_bodies b USING bench_wo_garbage g WHERE b.body_id = g.body_id")
                try await connection.execute("TRUNCATE bench_wo_garbage")
            }
        }
        return (upload, commit, cleanup)
    }

    private static func copyBodies(_ ids: [UUID], _ boxes: [AESGCM.SealedBox], on connection: PostgresConnection) async throws {
        try await connection.copyFrom(table: "bench_wo_bodies", columns: ["body_id", "nonce", "ciphertext", "tag"]) { writer in
            for index in ids.indices { try writer.append(ids[index], boxes[index].nonce, boxes[index].ciphertext, boxes[index].tag) }
        }
    }

    private static func changeSeqs(_ familyMember: UUID, records: String, on connection: PostgresConnection) async throws -> [UUID: Int64] {
        var result: [UUID: Int64] = [:]
        for row in try await connection.query(
            "SELECT record_id, change_seq FROM \(identifier: records) WHERE family_member_id = \(familyMember)")
        {
            let (id, seq) = try row.decode(UUID.self, Int64.self)
            result[id] = seq
        }
        return result
    }

    /// `RevocationStore.checkNoEditIsLost`'s query on either design's tables.
    private static func checkNoEditIsLost(
        _ familyMember: UUID, _ staging: UUID, records: String, staged: String, on connection: PostgresConnection
    ) async throws {
        let row = try await connection.query(
            """
            SELECT count(*), count(*) FILTER (WHERE s.record_id IS NULL OR s.source_change_seq <> r.change_seq)
            FROM \(identifier: records) r
            LEFT JOIN \(identifier: staged) s ON s.staging_id = \(staging) AND s.record_id = r.record_id
            WHERE r.family_member_id = \(familyMember)
            """
        ).first!
        let (_, lost) = try row.decode(Int.self, Int.self)
        guard lost == 0 else { throw BenchError("\(lost) records not staged from their current change") }
    }

    /// The commit's own version bump (with the owner's grant, so the deferred checks pass) and the staging's end.
    private static func bumpVersion(_ familyMember: UUID, _ staging: UUID, on connection: PostgresConnection) async throws {
        try await connection.execute(
            "UPDATE access_grants SET fmk_version = 2 WHERE family_member_id = \(familyMember) AND revoked_at IS NULL")
        try await connection.execute("UPDATE family_members SET current_fmk_version = 2 WHERE family_member_id = \(familyMember)")
        try await connection.execute("DELETE FROM revocation_stagings WHERE staging_id = \(staging)")
    }

    /// Times `body` after a CHECKPOINT, with the WAL it wrote (pg_current_wal_lsn before and after).
    private static func phase(on connection: PostgresConnection, _ body: () async throws -> Void) async throws -> Phase {
        _ = try? await connection.execute("CHECKPOINT")
        let before = try await connection.query("SELECT pg_current_wal_lsn()::text").first!.decode(String.self, column: 0)
        let (_, seconds) = try await Timing.measure { try await body() }
        let bytes = try await connection.query("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), \(before)::pg_lsn)::float8")
            .first!.decode(Double.self, column: 0)
        return Phase(seconds: seconds, walBytes: bytes)
    }

    private static func text(_ phase: Phase) -> String { "\(Format.duration(phase.seconds)) (WAL \(mib(phase.walBytes)))" }
    private static func mib(_ bytes: Double) -> String { String(format: "%.0f MiB", bytes / 1_048_576) }
}
