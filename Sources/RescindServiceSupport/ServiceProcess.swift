import Foundation
import Logging
import RescindLifecycle
import RescindObservability
import RescindTracing
import ServiceLifecycle

/// How a Rescind service process starts and ends, the same for every service so that an
/// operator reads each the same way: log lines on standard error at the configured level,
/// and a failure (a bad setting, an unreachable database) as one line `<program>: <error>`
/// on standard error with exit status 1; a graceful shutdown that does not finish within its
/// grace period ends with `ShutdownDeadline.exitStatus` (`serve`).
public enum ServiceProcess {
    /// Runs `body` (read the configuration, build the application, run it until
    /// SIGTERM/SIGINT) and returns when it does; a thrown error ends the process as above.
    /// Sets the allocator's arenas first (`MemoryAllocator.configureService`). `--version` prints
    /// `RescindVersion.current` and exits 0 without reading any configuration, as every Rescind
    /// executable does (the others through ArgumentParser).
    static func run(_ program: String, _ body: () async throws -> Void) async {
        RescindVersion.answerIfAsked()
        MemoryAllocator.configureService(
            environment: ProcessInfo.processInfo.environment, processors: ProcessInfo.processInfo.activeProcessorCount)
        do {
            try await body()
        } catch {
            FileHandle.standardError.write(Data("\(program): \(error)\n".utf8))
            exit(1)
        }
    }

    /// Runs `application` until SIGTERM or SIGINT, then shuts it down gracefully within
    /// `shutdownGrace`; past that the process exits with `ShutdownDeadline.exitStatus` and one
    /// critical log line (a database that stopped answering must not keep it running).
    /// - Parameter tracing: the exporter `bootstrapTracing` returned: run beside the
    ///   application, stopped after it so that its last spans still go out.
    static func serve(
        _ application: some Service, tracing: OTLPExporter? = nil, shutdownGrace: Duration, logger: Logger
    ) async throws {
        // Graceful shutdown runs from the last service to the first: the deadline first, the
        // exporter after the application.
        var services: [any Service] = [application, ShutdownDeadline(grace: shutdownGrace, logger: logger)]
        if let tracing { services.insert(TracingExport(exporter: tracing), at: 0) }
        let group = ServiceGroup(
            configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }

    /// Tracing when `RESCIND_OTEL_EXPORTER_OTLP_ENDPOINT` is set (`OTLPExporter.bootstrap`);
    /// pass what it returns to `serve`.
    static func bootstrapTracing(_ program: String) throws -> OTLPExporter? {
        try OTLPExporter.bootstrap(serviceName: program, environment: ProcessInfo.processInfo.environment)
    }

    /// Sends every `Logger` to standard error at `level` (a swift-log level name such as
    /// `debug`; anything else means `info`), as text or JSON lines (`RESCIND_LOG_FORMAT`).
    /// Call once, before the first `Logger` is made.
    /// - Throws: `LogFormatError` for an unknown `RESCIND_LOG_FORMAT`.
    static func bootstrapLogging(level: String) throws {
        try RescindLogging.bootstrap(level: level, environment: ProcessInfo.processInfo.environment)
    }
}

/// What `ServiceProcess.main` reads of a service's configuration.
public protocol ServiceProcessConfiguration: Sendable {
    /// Reads every setting from the `RESCIND_*` variables; throws naming the first unusable one.
    init(environment: [String: String]) throws
    /// A swift-log level name (`RESCIND_LOG_LEVEL`).
    var logLevel: String { get }
    /// How long a graceful shutdown may take before the process exits anyway (`ServiceProcess.serve`).
    var shutdownGrace: Duration { get }
}

extension ServiceProcess {
    /// A service's whole `main`, the same for every service: reads its configuration from the
    /// environment, sets up logging and tracing, builds the application, logs the ports it
    /// listens on, and serves it until SIGTERM/SIGINT (`run`, then `serve`).
    /// - Parameters:
    ///   - name: the service in words (`grant service`): the program is `rescind-grant-service`,
    ///     its logger `rescind.grant-service`, and it logs "grant service listening" (the line
    ///     the process tests wait for) and "grant service metrics listening".
    ///   - build: builds the application from the configuration and a logger; told the bound
    ///     port, then the metrics listener's port when it has one of its own.
    public static func main<Configuration: ServiceProcessConfiguration, Application: Service>(
        _ name: String, configuration: Configuration.Type,
        build: (
            Configuration, Logger, _ onServerRunning: @escaping @Sendable (Int) async -> Void,
            _ onMetricsServerRunning: @escaping @Sendable (Int) async -> Void
        ) async throws -> Application
    ) async {
        let dashed = name.replacingOccurrences(of: " ", with: "-")
        let program = "rescind-" + dashed
        await run(program) {
            let configuration = try Configuration(environment: ProcessInfo.processInfo.environment)
            try bootstrapLogging(level: configuration.logLevel)
            let tracing = try bootstrapTracing(program)
            let logger = Logger(label: "rescind." + dashed)
            let application = try await build(
                configuration, logger,
                { port in logger.info("\(name) listening", metadata: [LogKey.port: "\(port)"]) },
                { port in logger.info("\(name) metrics listening", metadata: [LogKey.port: "\(port)"]) })
            try await serve(application, tracing: tracing, shutdownGrace: configuration.shutdownGrace, logger: logger)
        }
    }
}
