import Foundation
import Logging
import RescindClient
import RescindCrypto
@_spi(DevKit) import RescindKafka
import RescindPostgres
import RescindProtocol

/// 4. Throughput: sustained revocations/s of small family members, the stress case, and
/// events/s through the grant service's outbox relay against a raw librdkafka producer loop.
enum ThroughputBench {
    static func run(stack: BenchStack, options: BenchOptions, report: BenchReport, logger: Logger) async throws {
        report.begin("4. Throughput (family members of \(options.smallFamilyMemberRecords) records)")
        try await StressBench.run(stack: stack, options: options, report: report, logger: logger)
        try await sustained(stack: stack, options: options, report: report)
        try await outbox(stack: stack, options: options, report: report)
    }

    /// `sustainedWorkers` owners revoke at the same time, each its own family member, one
    /// grantee after another; every revocation is the full client flow.
    private static func sustained(stack: BenchStack, options: BenchOptions, report: BenchReport) async throws {
        let workers = options.sustainedWorkers
        let perWorker = options.sustainedRevocationsPerWorker
        var plans: [(owner: BenchUser, familyMemberID: UUID, grantees: [UUID])] = []
        for worker in 0..<workers {
            let owner = try await stack.user("Sustained owner \(worker)")
            let seeded = try await RecordSeeder.seed(
                stack, owner: owner.session, count: options.smallFamilyMemberRecords, byteCount: options.recordBytes)
            var grantees: [UUID] = []
            for index in 0..<perWorker {
                let grantee = try await stack.user("Sustained grantee \(worker)-\(index)")
                try await grantee.retireFirstDevice()
                try await owner.session.grant(seeded.familyMemberID, to: grantee.userID)
                grantees.append(grantee.userID)
            }
            plans.append((owner, seeded.familyMemberID, grantees))
        }
        var rates: [Double] = []
        var drains: [Double] = []
        // Each run revokes a slice of every worker's grantees.
        let runs = max(1, min(options.runs, perWorker))
        for run in 0..<runs {
            let slice = (perWorker * run / runs)..<(perWorker * (run + 1) / runs)
            let start = ContinuousClock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for plan in plans {
                    group.addTask {
                        for grantee in plan.grantees[slice] {
                            _ = try await plan.owner.session.revoke(plan.familyMemberID, user: grantee)
                        }
                    }
                }
                try await group.waitForAll()
            }
            let elapsed = Timing.seconds(ContinuousClock.now - start)
            let drained = try await waitForEmptyOutbox(stack)
            let count = Double(slice.count * workers)
            rates.append(count / elapsed)
            drains.append(Timing.seconds(ContinuousClock.now - start) - elapsed)
            BenchReport.log(
                "sustained run \(run + 1): \(Int(count)) revocations by \(workers) owners in \(Format.duration(elapsed)) "
                    + "= \(String(format: "%.1f", count / elapsed))/s; outbox empty \(drained ? "" : "NOT ")"
                    + "\(Format.duration(drains.last!)) after the last commit")
        }
        report.add(
            "sustained revocations, \(workers) owners at once (median of \(runs))",
            project: String(format: "%.1f revocations/s (%@ records/s re-encrypted)", Statistics.median(rates),
                Format.grouped(Statistics.median(rates) * Double(options.smallFamilyMemberRecords))))
        report.add("… outbox empty after the last commit (p50)", project: Format.duration(Statistics.median(drains)))
        report.note(
            "Sustained: each revocation is the whole client flow (begin, download, re-encrypt, upload, re-wrap for the "
                + "remaining grantees, commit) against one grant service process with its default pool of 8 connections.")
    }

    /// Outbox rows inserted straight into the table (one transaction, one NOTIFY), timed
    /// from that commit until the relay marked the last one sent; against the raw producer.
    private static func outbox(stack: BenchStack, options: BenchOptions, report: BenchReport) async throws {
        let count = options.outboxEvents
        let payload = try sampleCommandEnvelope()
        let topic = stack.topicPrefix + BenchStack.outboxTopic
        var relay: [Double] = []
        var raw: [Double] = []
        for run in 1...options.runs {
            try await stack.withConnection { connection in
                try await connection.transaction { connection in
                    try await connection.execute(
                        """
                        INSERT INTO outbox (topic, message_key, payload)
                        SELECT \(topic), gen_random_uuid()::text, \(payload) FROM generate_series(1, \(count))
                        """)
                    try await connection.execute("SELECT pg_notify('rescind_outbox', '')")
                }
            }
            let start = ContinuousClock.now
            guard try await waitForEmptyOutbox(stack) else { throw BenchError("the outbox relay did not drain \(count) rows") }
            let relayRate = Double(count) / Timing.seconds(ContinuousClock.now - start)
            let rawRate = try await rawProducerRate(stack: stack, count: count, payload: payload)
            relay.append(relayRate)
            raw.append(rawRate)
            BenchReport.log(
                "outbox run \(run): relay \(Format.grouped(relayRate)) events/s, raw librdkafka \(Format.grouped(rawRate)) events/s "
                    + "(\(count) events of \(payload.count) bytes)")
        }
        report.add(
            "events through the outbox relay (\(Format.grouped(Double(count))) × \(payload.count) B)",
            project: .rate(Statistics.median(relay), "events"), baseline: .rate(Statistics.median(raw), "events"))
        report.note(
            "Outbox baseline: `RawProducerBaseline` (RescindKafka), librdkafka's producer loop with the same settings "
                + "(idempotent, acks=all, no linger, as the relay's producer) and payload size, to the same broker. The relay claims \(options.outboxBatch ?? 500) rows per "
                + "transaction (RESCIND_OUTBOX_BATCH_SIZE), awaits every acknowledgement, then marks them sent.")
    }

    private static func waitForEmptyOutbox(_ stack: BenchStack) async throws -> Bool {
        try await stack.withConnection { connection in
            try await Timing.wait(timeout: .seconds(120), interval: .milliseconds(10)) {
                try await connection.query("SELECT count(*) FROM outbox WHERE sent_at IS NULL").first!.decode(Int.self, column: 0) == 0
            }
        }
    }

    private static func rawProducerRate(stack: BenchStack, count: Int, payload: Data) async throws -> Double {
        let configuration = KafkaProducerConfiguration(bootstrapServers: stack.bootstrapServers, clientID: "rescind-bench-raw", linger: .zero)
        let topic = stack.topicPrefix + BenchStack.rawProducerTopic
        let key = Data(UUID().uuidString.lowercased().utf8)
        return try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result {
                    let outcome = try RawProducerBaseline.produce(
                        count: count, topic: topic, key: key, value: payload, configuration: configuration)
                    guard outcome.acknowledged == count else {
                        throw BenchError("raw producer: \(outcome.acknowledged) of \(count) acknowledged")
                    }
                    return Double(count) / Timing.seconds(outcome.elapsed)
                })
            }
        }
    }

    /// A device command envelope of realistic size (signed by a throwaway key).
    private static func sampleCommandEnvelope() throws -> Data {
        let command = DeviceCommand(
            commandID: UUID(), eventID: UUID(), deviceID: UUID(), action: .fmkRotation, familyMemberID: UUID(),
            newFMKVersion: 2, issuedAt: Date())
        return try SignedMessage(schema: DeviceCommand.schema, signer: "grant-service", payload: command, key: Ed25519.PrivateKey())
            .encoded()
    }
}
