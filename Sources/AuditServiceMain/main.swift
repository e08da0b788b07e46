import AuditService
import Foundation
import Logging
import RescindObservability
import RescindServiceSupport

// rescind-audit-service: configuration from RESCIND_* environment variables (see docs/configuration.md).
await ServiceProcess.run("rescind-audit-service") {
    let configuration = try AuditServiceConfiguration(environment: ProcessInfo.processInfo.environment)
    try ServiceProcess.bootstrapLogging(level: configuration.logLevel)
    let tracing = try ServiceProcess.bootstrapTracing("rescind-audit-service")
    let logger = Logger(label: "rescind.audit-service")
    let app = try await AuditServiceApplication.build(configuration: configuration, logger: logger) { port in
        logger.info("audit service listening", metadata: [LogKey.port: "\(port)"])
    } onMetricsServerRunning: { port in
        logger.info("audit service metrics listening", metadata: [LogKey.port: "\(port)"])
    }
    try await ServiceProcess.serve(app, tracing: tracing, shutdownGrace: configuration.shutdownGrace, logger: logger)
}
