import Foundation
import RescindClient
import RescindCrypto
import RescindPostgres

/// 2. A whole revocation through the grant service's API, as the owner's client runs it
/// (`UserSession.revoke`: begin → download → re-encrypt on all cores → batched upload →
/// commit), against a binary COPY of the same bytes into a table shaped like `records`.
enum CommitBench {
    /// The parts of one revocation, from the client's progress reports.
    private enum Step: String, CaseIterable {
        case begin, download, reencrypt = "re-encrypt", upload, commit
    }

    private struct Run {
        var total: Double
        var steps: [Step: Double]
        var copy: Double
        /// CPU seconds the owner's client (this process) and the grant service used.
        var clientCPU: Double
        var serviceCPU: Double
    }

    static func run(stack: BenchStack, options: BenchOptions, report: BenchReport) async throws {
        report.begin("2. Revocation commit through the grant service API (\(options.recordBytes)-byte records)")
        let owner = try await stack.register("Commit owner")
        let (baselineFamilyMember, _) = try await owner.createFamilyMember()
        try await stack.withConnection { connection in
            try await connection.executeScript(
                """
                -- `records` as it was before its bodies moved to `record_bodies` (migration 0014):
                -- one row per record, body inline, the same keys, indexes and deferred check.
                CREATE TABLE bench_copy (
                    record_id        uuid PRIMARY KEY,
                    family_member_id uuid NOT NULL REFERENCES family_members (family_member_id),
                    fmk_version      integer NOT NULL,
                    nonce            bytea NOT NULL CHECK (length(nonce) = 12),
                    ciphertext       bytea NOT NULL CHECK (length(ciphertext) <= 1048576),
                    tag              bytea NOT NULL CHECK (length(tag) = 16),
                    change_seq       bigint NOT NULL DEFAULT nextval('record_change_seq'),
                    updated_at       timestamptz NOT NULL DEFAULT now(),
                    FOREIGN KEY (family_member_id, fmk_version)
                        REFERENCES family_members (family_member_id, current_fmk_version) DEFERRABLE INITIALLY DEFERRED);
                CREATE INDEX bench_copy_by_family_member ON bench_copy (family_member_id, record_id);
                CREATE UNIQUE INDEX bench_copy_by_change ON bench_copy (change_seq);
                CREATE INDEX bench_copy_by_family_member_change ON bench_copy (family_member_id, change_seq);
                ALTER TABLE bench_copy SET (toast_tuple_target = 8160);
                ALTER TABLE bench_copy ALTER COLUMN ciphertext SET STORAGE MAIN;
                """)
        }

        var medians: [(size: Int, project: Double, copy: Double)] = []
        for size in options.commitSizes {
            let runs = size > 10_000 ? min(options.largeCommitRuns, options.runs) : options.runs
            var grantees: [UUID] = []
            for index in 0..<runs {
                let grantee = try await stack.register("Commit grantee \(size)-\(index)")
                grantees.append(grantee.keys.userID)
            }
            let seeded = try await RecordSeeder.seed(stack, owner: owner, count: size, byteCount: options.recordBytes)
            for grantee in grantees { try await owner.grant(seeded.familyMemberID, to: grantee) }

            var results: [Run] = []
            for (index, grantee) in grantees.enumerated() {
                let result = try await measure(
                    owner: owner, seeded: seeded, revoking: grantee, baselineFamilyMember: baselineFamilyMember,
                    stack: stack, options: options)
                results.append(result)
                let phases = Step.allCases.map { "\($0.rawValue) \(Format.duration(result.steps[$0] ?? .nan))" }
                BenchReport.log(
                    "\(size) records, run \(index + 1): revocation \(Format.duration(result.total)) "
                        + "(\(Format.grouped(Double(size) / result.total)) records/s; \(phases.joined(separator: ", ")); "
                        + String(format: "CPU: client %.2f s, grant service %.2f s); ", result.clientCPU, result.serviceCPU)
                        + "raw COPY \(Format.duration(result.copy)) (\(Format.grouped(Double(size) / result.copy)) records/s)")
            }
            let project = Statistics.median(results.map(\.total))
            let copy = Statistics.median(results.map(\.copy))
            medians.append((size, project, copy))
            report.add(
                "\(Format.grouped(Double(size))) records (median of \(runs))", project: .rate(Double(size) / project, "records"),
                baseline: .rate(Double(size) / copy, "records"))
            // The issue's figure: the API calls alone, without the client's download and re-encryption.
            let apiCalls = Statistics.median(results.map { run in
                [Step.begin, .upload, .commit].reduce(0) { $0 + (run.steps[$1] ?? .nan) }
            })
            report.add(
                "… of which begin → batched upload → commit (the API calls)", project: .rate(Double(size) / apiCalls, "records"),
                baseline: .rate(Double(size) / copy, "records"))
            let phaseText = Step.allCases.map { step in
                "\(step.rawValue) \(Format.duration(Statistics.median(results.compactMap { $0.steps[step] })))"
            }
            report.note(
                "\(Format.grouped(Double(size))) records: total \(Format.duration(project)) = \(phaseText.joined(separator: " + ")); "
                    + String(
                        format: "CPU time: owner's client %.2f s, grant service %.2f s (the rest of the wall time: PostgreSQL, waits)",
                        Statistics.median(results.map(\.clientCPU)), Statistics.median(results.map(\.serviceCPU))))
        }
        // The janitor deletes the old version's bodies after each commit (not timed above). The
        // next sections start once it has deleted the last ones and PostgreSQL has vacuumed, so
        // that the memory and fan-out figures do not share the machine with this section's leftovers.
        let (waited, vacuumed) = try await settle(stack)
        BenchReport.log("commit section settled: the janitor's queue empty after \(Format.duration(waited)), VACUUM \(Format.duration(vacuumed))")
        report.note(
            "Before the next section: \(Format.duration(waited)) until the janitor (every 60 s) had deleted the old bodies of the "
                + "last revocations, then \(Format.duration(vacuumed)) of VACUUM on `record_bodies` and `records`.")
        for (previous, next) in zip(medians, medians.dropFirst()) {
            let growth = next.project / previous.project
            report.add(
                "time growth \(Format.grouped(Double(previous.size))) → \(Format.grouped(Double(next.size))) records",
                project: String(format: "%.1f× (%.0f µs/record → %.0f µs/record)", growth,
                    previous.project / Double(previous.size) * 1e6, next.project / Double(next.size) * 1e6),
                baseline: String(format: "%.1f× (COPY)", next.copy / previous.copy),
                ratio: String(format: "linear = %.0f×", Double(next.size) / Double(previous.size)))
        }
        report.note(
            "Baseline: one binary COPY (RescindPostgres.copyFrom) of the same nonce/ciphertext/tag bytes into `bench_copy` "
                + "(the columns, indexes, deferred foreign key and TOAST settings `records` had with its bodies inline), in one "
                + "transaction, truncated before each run. The revocation downloads the records, uploads each re-encrypted "
                + "body once into `record_bodies` (with a narrow staging row naming it), then the commit points the narrow "
                + "`records` rows at the new bodies (the old ones are deleted by the janitor afterwards, not timed here). Upload batch: \(options.uploadBatch) records, \(options.uploadsInFlight) in flight. The first row is the "
                + "owner's whole revocation (its records/s = records ÷ total time); the second counts only the begin, upload and "
                + "commit calls' time.")
    }

    /// Waits until the janitor deleted every old body the section's revocations queued, then
    /// vacuums the tables they were in. - Returns: the wait and the vacuum, in seconds.
    private static func settle(_ stack: BenchStack) async throws -> (waited: Double, vacuumed: Double) {
        let start = ContinuousClock.now
        let drained = try await stack.withConnection { connection in
            try await Timing.wait(timeout: .seconds(300), interval: .milliseconds(500)) {
                try await connection.query("SELECT NOT EXISTS (SELECT 1 FROM record_body_garbage)").first!.decode(Bool.self, column: 0)
            }
        }
        guard drained else { throw BenchError("the janitor did not delete the old record bodies within 300 s") }
        let waited = Timing.seconds(ContinuousClock.now - start)
        let (_, vacuumed) = try await Timing.measure {
            try await stack.withConnection { try await $0.executeScript("VACUUM (ANALYZE) record_bodies, records") }
        }
        return (waited, vacuumed)
    }

    private static func measure(
        owner: UserSession, seeded: SeededFamilyMember, revoking grantee: UUID, baselineFamilyMember: UUID,
        stack: BenchStack, options: BenchOptions
    ) async throws -> Run {
        var owner = owner
        owner.uploadsInFlight = options.uploadsInFlight
        let marks = Locked<[RevocationProgress.Phase: ContinuousClock.Instant]>([:])
        let clientCPU = ProcessMemory.cpuSeconds() ?? 0
        let serviceCPU = ProcessMemory.cpuSeconds(pid: stack.grant.pid) ?? 0
        let start = ContinuousClock.now
        let committed = try await owner.revoke(seeded.familyMemberID, user: grantee, uploadBatchSize: options.uploadBatch) { progress in
            let now = ContinuousClock.now
            marks.withLock { marks in
                if marks[progress.phase] == nil { marks[progress.phase] = now }
            }
        }
        let total = Timing.seconds(ContinuousClock.now - start)
        let clientUsed = (ProcessMemory.cpuSeconds() ?? 0) - clientCPU
        let serviceUsed = (ProcessMemory.cpuSeconds(pid: stack.grant.pid) ?? 0) - serviceCPU
        guard committed.recordsReencrypted == seeded.recordIDs.count else {
            throw BenchError("the revocation re-encrypted \(committed.recordsReencrypted) of \(seeded.recordIDs.count) records")
        }
        let instants = marks.current
        var steps: [Step: Double] = [:]
        if let first = instants[.downloading] { steps[.begin] = Timing.seconds(first - start) }
        let order: [(Step, RevocationProgress.Phase, RevocationProgress.Phase)] = [
            (.download, .downloading, .reencrypting), (.reencrypt, .reencrypting, .uploading),
            (.upload, .uploading, .committing), (.commit, .committing, .committed),
        ]
        for (step, from, to) in order {
            if let start = instants[from], let end = instants[to] { steps[step] = Timing.seconds(end - start) }
        }

        let copy = try await stack.withConnection { connection in
            try await connection.execute("TRUNCATE bench_copy")
            let (_, seconds) = try await Timing.measure {
                try await connection.transaction { connection in
                    try await RecordSeeder.copy(
                        ids: seeded.recordIDs, boxes: seeded.boxes, familyMemberID: baselineFamilyMember, into: "bench_copy",
                        on: connection)
                }
            }
            return seconds
        }
        return Run(total: total, steps: steps, copy: copy, clientCPU: clientUsed, serviceCPU: serviceUsed)
    }
}
