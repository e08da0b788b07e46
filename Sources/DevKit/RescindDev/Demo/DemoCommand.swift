import ArgumentParser
import Foundation
import RescindTracing

/// The end-to-end demo: real processes on the local stack, the guide's story for Emma.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Play the guide's revocation story on local servers and leave them running.",
        discussion: """
            Starts the grant service, the audit service and one device agent per device
            (Adult A's iPhone and iPad, Adult B's iPhone, Adult C's iPhone and iPad) as
            separate processes on the stack in RESCIND_DATABASE_URL and
            RESCIND_KAFKA_BOOTSTRAP_SERVERS, then: records shared with B and C, C revoked
            (A's and B's devices rotate, C's erase, the audit service reports completion),
            C's 403, C re-granted (current version only), B's stolen phone revoked from every
            family member while A's iPad is offline, and the iPad healing when it returns.
            Each run starts from a clean slate (its own schemas and topic prefix).

            Examples:
              scripts/demo.sh            (brings up the stack, builds, runs this)
              rescind-dev demo --records 200
              rescind-dev demo --down        (stops what a demo left running)
            """)

    @Flag(help: "Stop the processes a previous demo left running, and exit.")
    var down = false

    @Option(help: "Records in Emma's profile.")
    var records = 500

    @Option(help: "Port of the grant service.")
    var grantPort = 8080

    @Option(help: "Port of the audit service (monitoring page).")
    var auditPort = 8081

    @Option(help: "Seconds a device has to acknowledge before the audit service raises ack_overdue.")
    var ackDeadline = 6

    @Option(help: "The repository root (default: the current directory).")
    var root: String = FileManager.default.currentDirectoryPath

    @Option(help: "Where the demo keeps logs, keys and agent data (default: <root>/.stack/demo).")
    var stateDirectory: String?

    @Option(help: "Prefix of the demo's Kafka topics (default: demo-<seconds since 1970>.), to read them afterwards.")
    var topicPrefix: String?

    func run() async throws {
        let repository = URL(fileURLWithPath: root)
        let directory = DemoDirectory(
            root: stateDirectory.map { URL(fileURLWithPath: $0) } ?? repository.appendingPathComponent(".stack/demo"))
        let stopped = await DemoProcess.stopAll(in: directory)
        if down {
            print(stopped == 0 ? "no demo processes were running" : "stopped \(stopped) demo process(es)")
            return
        }
        let environment = ProcessInfo.processInfo.environment
        guard let database = environment["RESCIND_DATABASE_URL"], let kafka = environment["RESCIND_KAFKA_BOOTSTRAP_SERVERS"] else {
            throw CLIError("RESCIND_DATABASE_URL and RESCIND_KAFKA_BOOTSTRAP_SERVERS are not set: run scripts/demo.sh, or source .stack/env")
        }
        guard (1...100_000).contains(records) else { throw CLIError("--records must be between 1 and 100000") }
        // The development broker answers a waiting fetch only when it expires: without this,
        // every hop through Kafka (command → agent, ack → audit) waits up to librdkafka's 500 ms.
        let fetchWait = environment["RESCIND_KAFKA_FETCH_WAIT_MS"].flatMap { $0.isEmpty ? nil : $0 } ?? "25"
        guard let fetchWaitMilliseconds = Int(fetchWait), (0...10_000).contains(fetchWaitMilliseconds) else {
            throw CLIError("RESCIND_KAFKA_FETCH_WAIT_MS must be an integer between 0 and 10000")
        }
        try directory.reset()
        let tls = try await DemoTLS.resolve(environment: environment, repository: repository, directory: directory.root)
        let story = DemoStory(
            repository: repository, directory: directory, databaseURL: database, kafkaBootstrapServers: kafka,
            kafkaFetchWaitMilliseconds: fetchWaitMilliseconds, topicPrefix: topicPrefix ?? "demo-\(Int(Date().timeIntervalSince1970)).",
            grantPort: grantPort, auditPort: auditPort, emmaRecords: records, ackDeadlineSeconds: ackDeadline, tls: tls)
        // With RESCIND_OTEL_EXPORTER_OTLP_ENDPOINT set, the demo's client and every process it
        // starts export their spans, and each revocation's trace id is in the timeline.
        let tracing = try OTLPExporter.bootstrap(serviceName: "rescind-dev demo", environment: environment)
        let export = tracing.map { exporter in Task { await exporter.run() } }
        defer { export?.cancel() }
        do {
            try await story.play()
            export?.cancel()
            await export?.value
        } catch {
            // The services' own words are what explain a failure; show their last lines.
            for name in ["grant-service", "audit-service"] {
                let path = directory.logs.appendingPathComponent("\(name).log").path
                guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { continue }
                let tail = text.split(separator: "\n").suffix(8).joined(separator: "\n")
                FileHandle.standardError.write(Data("--- last lines of \(path) ---\n\(tail)\n".utf8))
            }
            throw error
        }
    }
}
