import Dispatch
import Foundation
import RescindClient
@_spi(DevKit) import RescindCrypto
import RescindProtocol

/// 1. The re-encryption kernel: 2 KiB records opened under FMK v1 and sealed under FMK v2
/// with a fresh nonce and the new version in the associated data, on one core and on all,
/// against the raw EVP loop (`RawEVPBaseline`) over the same bytes.
enum CryptoBench {
    static func run(options: BenchOptions, report: BenchReport) async throws {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        report.begin("1. Re-encryption kernel (\(options.recordBytes)-byte records, FMK v1 → v2)")
        let oldKey = SecretKey()
        let newKey = SecretKey()
        let (ids, boxes) = try RecordSeeder.seal(
            count: options.kernelRecords, byteCount: options.recordBytes, fmk: oldKey, version: 1)
        let requests = zip(ids, boxes).map { id, box in
            AESGCM.ResealRequest(
                box: box, oldAssociatedData: RecordAssociatedData.make(recordID: id, fmkVersion: 1),
                newAssociatedData: RecordAssociatedData.make(recordID: id, fmkVersion: 2))
        }
        let count = Double(requests.count)

        // Warm-up: page in the inputs, let the CPU settle on a frequency.
        // (Inside a synchronous closure: the dispatch-based batch, as measured below, not its async twin.)
        _ = try Timing.measure { try AESGCM.reseal(requests, from: oldKey, to: newKey) }
        _ = try rawAllCores(requests, from: oldKey, to: newKey, workers: cores)

        var projectOne: [Double] = []
        var rawOne: [Double] = []
        var projectAll: [Double] = []
        var rawAll: [Double] = []
        var projectAppending: [Double] = []
        var projectClient: [Double] = []
        var projectClientOne: [Double] = []
        // Load-robust companions of the wall-clock figures: process CPU time and minor faults per pass.
        var (rawCPUOne, rawCPUAll): ([Double], [Double]) = ([], [])
        var (clientOne, clientAll): ([ProcessCounters], [ProcessCounters]) = ([], [])
        // The client's previous path (`PreviousClientPath`: a task per batch on the cooperative
        // pool, before one worker per core), same records.
        var (previousOne, previousAll): ([Double], [Double]) = ([], [])
        var (previousCountersOne, previousCountersAll): ([ProcessCounters], [ProcessCounters]) = ([], [])
        // The same records as the client holds them after a download, for its path.
        let familyMemberID = UUID()
        let records = zip(ids, boxes).enumerated().map { index, pair in
            RecordResponse(
                recordID: pair.0, familyMemberID: familyMemberID, fmkVersion: 1, nonce: Data(pair.1.nonce),
                ciphertext: Data(pair.1.ciphertext), tag: Data(pair.1.tag), changeSeq: Int64(index))
        }
        // One buffer for every pass, as a client reuses its upload batch buffer: it is sized
        // once, so no pass pays for growing it or for the kernel's fresh pages.
        var batch: [UInt8] = []
        batch.reserveCapacity(requests.reduce(0) { $0 + $1.box.combined.count })
        for run in 1...options.runs {
            let (_, p1) = try Timing.measure { try AESGCMResealer(from: oldKey, to: newKey).reseal(requests) }
            let rawOneBefore = ProcessCounters.now()
            let (_, r1) = try Timing.measure { try RawEVPBaseline.reseal(requests, in: requests.indices, from: oldKey, to: newKey) }
            rawCPUOne.append((ProcessCounters.now() - rawOneBefore).cpuSeconds)
            let (_, pn) = try Timing.measure { try AESGCM.reseal(requests, from: oldKey, to: newKey) }
            let rawAllBefore = ProcessCounters.now()
            let (_, rn) = try Timing.measure { try rawAllCores(requests, from: oldKey, to: newKey, workers: cores) }
            rawCPUAll.append((ProcessCounters.now() - rawAllBefore).cpuSeconds)
            let (_, pd) = try Timing.measure {
                // As an upload batch is built: every record appended to one buffer, reused pass after pass.
                batch.removeAll(keepingCapacity: true)
                let resealer = AESGCMResealer(from: oldKey, to: newKey)
                for request in requests {
                    try resealer.reseal(
                        combined: request.box.combined, oldAssociatedData: request.oldAssociatedData,
                        newAssociatedData: request.newAssociatedData, appendingTo: &batch)
                }
            }
            // The client's path twice, the same work each time: on one worker, then on every core.
            let (pc1, counters1) = try await clientPath(records, from: oldKey, to: newKey, workers: 1)
            let (pc, countersN) = try await clientPath(records, from: oldKey, to: newKey, workers: cores)
            clientOne.append(counters1)
            clientAll.append(countersN)
            let (pp1, previous1) = try await clientPath(records, from: oldKey, to: newKey, workers: 1, previous: true)
            let (ppn, previousN) = try await clientPath(records, from: oldKey, to: newKey, workers: cores, previous: true)
            previousOne.append(count / pp1)
            previousAll.append(count / ppn)
            previousCountersOne.append(previous1)
            previousCountersAll.append(previousN)
            projectClientOne.append(count / pc1)
            projectClient.append(count / pc)
            projectAppending.append(count / pd)
            projectOne.append(count / p1)
            rawOne.append(count / r1)
            projectAll.append(count / pn)
            rawAll.append(count / rn)
            let perRecord = { (value: Double) in String(format: "%.2f", value / count) }
            let line: [String] = [
                "run \(run): records/s one core: appending \(Format.grouped(count / pd)), ",
                "SealedBox each \(Format.grouped(count / p1)), raw EVP \(Format.grouped(count / r1)); ",
                "\(cores) cores: AESGCM.reseal \(Format.grouped(count / pn)), raw EVP \(Format.grouped(count / rn)); ",
                "client's path: 1 worker \(Format.grouped(count / pc1)), \(cores) workers \(Format.grouped(count / pc)) ",
                "(\(String(format: "%.2f×", pc1 / pc)); raw EVP \(String(format: "%.2f×", r1 / rn))); ",
                "CPU µs/record client 1 worker \(perRecord(counters1.cpuSeconds * 1e6)), ",
                "\(cores) workers \(perRecord(countersN.cpuSeconds * 1e6)), ",
                "raw EVP 1 thread \(perRecord(rawCPUOne.last! * 1e6)), \(cores) threads \(perRecord(rawCPUAll.last! * 1e6)); ",
                "minor faults/record client \(perRecord(Double(counters1.minorFaults))), \(perRecord(Double(countersN.minorFaults))); ",
                "previous client path: 1 worker \(Format.grouped(count / pp1)), \(cores) workers \(Format.grouped(count / ppn)) ",
                "(\(String(format: "%.2f×", pp1 / ppn))), CPU µs/record \(perRecord(previous1.cpuSeconds * 1e6)), ",
                "\(perRecord(previousN.cpuSeconds * 1e6)), minor faults/record \(perRecord(Double(previous1.minorFaults))), ",
                "\(perRecord(Double(previousN.minorFaults)))",
            ]
            BenchReport.log(line.joined())
        }
        let medianProjectOne = Statistics.median(projectOne)
        let medianProjectAll = Statistics.median(projectAll)
        let medianRawOne = Statistics.median(rawOne)
        let medianRawAll = Statistics.median(rawAll)
        report.add(
            "one core, appended to a reused batch buffer (AESGCMResealer, no allocation)",
            project: .rate(Statistics.median(projectAppending), "records"), baseline: .rate(medianRawOne, "records"))
        report.add(
            "one core, one new SealedBox per record (AESGCMResealer)", project: .rate(medianProjectOne, "records"),
            baseline: .rate(medianRawOne, "records"))
        report.add(
            "all \(cores) cores (AESGCM.reseal batch)", project: .rate(medianProjectAll, "records"),
            baseline: .rate(medianRawAll, "records"))
        let medianClient = Statistics.median(projectClient)
        let medianClientOne = Statistics.median(projectClientOne)
        report.add(
            "one core, sealed into 500-record upload bodies (RecordCipher.resealIntoBatches, 1 worker)",
            project: .rate(medianClientOne, "records"), baseline: .rate(medianRawOne, "records"))
        report.add(
            "all \(cores) cores, sealed into 500-record upload bodies (RecordCipher.resealIntoBatches: the client's path)",
            project: .rate(medianClient, "records"), baseline: .rate(medianRawAll, "records"))
        report.add(
            "\(cores) cores ÷ 1 core (client's path on \(cores) workers ÷ the same on 1)",
            project: String(format: "%.2f×", medianClient / medianClientOne),
            baseline: String(format: "%.2f× (raw EVP)", medianRawAll / medianRawOne))
        let medianPreviousOne = Statistics.median(previousOne)
        let medianPreviousAll = Statistics.median(previousAll)
        report.add(
            "… previous client path (task per batch on the cooperative pool, resealer per batch, record copied first): 1 worker",
            project: .rate(medianPreviousOne, "records"), baseline: .rate(medianRawOne, "records"))
        report.add(
            "… previous client path: all \(cores) cores", project: .rate(medianPreviousAll, "records"),
            baseline: .rate(medianRawAll, "records"))
        report.add(
            "… previous client path: \(cores) cores ÷ 1 core", project: String(format: "%.2f×", medianPreviousAll / medianPreviousOne),
            baseline: String(format: "%.2f× (raw EVP)", medianRawAll / medianRawOne))
        let perRecord = { (values: [Double]) in String(format: "%.2f", Statistics.median(values) / count) }
        let robust: [String] = [
            "Load-robust view (process CPU time and minor page faults, median per pass): the client's path costs ",
            "\(perRecord(clientOne.map { $0.cpuSeconds * 1e6 })) µs of CPU per record on 1 worker and ",
            "\(perRecord(clientAll.map { $0.cpuSeconds * 1e6 })) µs on \(cores) ",
            "(raw EVP: \(perRecord(rawCPUOne.map { $0 * 1e6 })) and \(perRecord(rawCPUAll.map { $0 * 1e6 })) µs), with ",
            "\(perRecord(clientOne.map { Double($0.minorFaults) })) and \(perRecord(clientAll.map { Double($0.minorFaults) })) ",
            "minor faults per record. Equal CPU per record on 1 and \(cores) workers means the extra workers add no work ",
            "of their own; a wall-clock ratio below \(cores)× then comes from time not given to the process (other load). ",
            "Previous client path: \(perRecord(previousCountersOne.map { $0.cpuSeconds * 1e6 })) and ",
            "\(perRecord(previousCountersAll.map { $0.cpuSeconds * 1e6 })) µs, \(perRecord(previousCountersOne.map { Double($0.minorFaults) })) ",
            "and \(perRecord(previousCountersAll.map { Double($0.minorFaults) })) minor faults per record.",
        ]
        report.note(robust.joined())
        report.note(
            "Baseline: `RawEVPBaseline` (RescindCrypto), EVP contexts and buffers reused, nonces from RAND_bytes 64 at a time, "
                + "no allocation per record; all-core baseline = the same loop on \(cores) threads (one slice each). "
                + "\(requests.count) records per pass, median of \(options.runs) passes. The client's path builds what a "
                + "revocation uploads: each 500-record batch sealed straight into its binary body, the batches on all cores; "
                + "its scaling is against the same call on one worker (the same records, bodies and allocations), not against "
                + "the appending line, whose one reused buffer never takes a fresh page.")

        try fiveHundredRecords(requests: Array(requests.prefix(500)), oldKey: oldKey, cores: cores, report: report)
    }

    /// The seeds' figure: the crypto of revoking a family member with 500 records — a new
    /// FMK, 500 records re-encrypted (all cores), the new FMK wrapped for the owner (master
    /// key) and two grantees (X25519 → HKDF → AES key wrap).
    private static func fiveHundredRecords(
        requests: [AESGCM.ResealRequest], oldKey: SecretKey, cores: Int, report: BenchReport
    ) throws {
        let familyMemberID = UUID()
        let masterKey = SecretKey()
        let owner = X25519.PrivateKey()
        let grantees = [X25519.PrivateKey().publicKey, X25519.PrivateKey().publicKey]
        let repetitions = 101
        var project: [Double] = []
        var raw: [Double] = []
        for _ in 0..<repetitions {
            let (_, seconds) = try Timing.measure {
                let newKey = SecretKey()
                let boxes = try AESGCM.reseal(requests, from: oldKey, to: newKey)
                var wrapped = [try FMKWrapping.wrapForOwner(newKey, familyMemberID: familyMemberID, version: 2, masterKey: masterKey)]
                for grantee in grantees {
                    wrapped.append(
                        try FMKWrapping.wrap(newKey, familyMemberID: familyMemberID, version: 2, granter: owner, grantee: grantee))
                }
                return (boxes.count, wrapped.count)
            }
            project.append(seconds)
            let newKey = SecretKey()
            let (_, rawSeconds) = try Timing.measure { try rawAllCores(requests, from: oldKey, to: newKey, workers: cores) }
            raw.append(rawSeconds)
        }
        let median = Statistics.median(project)
        report.add(
            "500 records end to end in RescindCrypto (new FMK + reseal + 3 key wraps)", project: .time(median),
            baseline: .time(Statistics.median(raw)))
        report.add("… against the seeds' figure (\"500 records in ~500 ms\")", project: Format.duration(median), baseline: "500 ms",
            ratio: String(format: "%.0f× faster", 0.5 / median))
        BenchReport.log(
            "500 records: p50 \(Format.duration(median)), p95 \(Format.duration(Statistics.percentile(project, 95))) over \(repetitions); "
                + "raw EVP (500 records, \(cores) threads) p50 \(Format.duration(Statistics.median(raw)))")
        report.note(
            "500-record figure: median of \(repetitions); its baseline is the raw EVP loop over the same 500 records on \(cores) threads "
                + "(re-encryption only: the three key wraps, ~0.1 ms each, have no raw counterpart).")
    }

    /// The client's path (`RecordCipher.resealIntoBatches`, 500-record bodies; `previous`:
    /// `PreviousClientPath`) on `workers` workers; the bodies are dropped after the clock
    /// stops, as an upload would drop them.
    /// - Returns: seconds, and the process's CPU time and minor faults meanwhile.
    private static func clientPath(
        _ records: [RecordResponse], from oldKey: SecretKey, to newKey: SecretKey, workers: Int, previous: Bool = false
    ) async throws -> (seconds: Double, counters: ProcessCounters) {
        let counters = ProcessCounters.now()
        let start = ContinuousClock.now
        let batches: [BinaryRecords.UploadBatchWriter]
        if previous {
            batches = try await PreviousClientPath.resealIntoBatches(
                records, from: oldKey, to: newKey, newVersion: 2, batchSize: 500, maximumWorkers: workers)
        } else {
            batches = try await RecordCipher.resealIntoBatches(
                records, from: oldKey, to: newKey, newVersion: 2, batchSize: 500, maximumWorkers: workers)
        }
        let seconds = Timing.seconds(ContinuousClock.now - start)
        let used = ProcessCounters.now() - counters
        guard batches.reduce(0, { $0 + $1.count }) == records.count else { throw BenchError("the client path lost records") }
        return (seconds, used)
    }

    /// The raw loop on `workers` threads, one contiguous slice each.
    static func rawAllCores(
        _ requests: [AESGCM.ResealRequest], from oldKey: SecretKey, to newKey: SecretKey, workers: Int
    ) throws -> UInt64 {
        let results = Locked<[Result<UInt64, any Error>]>([])
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            let slice = (requests.count * worker / workers)..<(requests.count * (worker + 1) / workers)
            let result = Result { try RawEVPBaseline.reseal(requests, in: slice, from: oldKey, to: newKey) }
            results.withLock { $0.append(result) }
        }
        return try results.current.reduce(0) { $0 &+ (try $1.get()) }
    }
}
