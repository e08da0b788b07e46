import Foundation
import GrantService
import Logging
import RescindObservability
import RescindServiceSupport

// rescind-grant-service: configuration from RESCIND_* environment variables (see docs/configuration.md).
await ServiceProcess.run("rescind-grant-service") {
    let configuration = try GrantServiceConfiguration(environment: ProcessInfo.processInfo.environment)
    try ServiceProcess.bootstrapLogging(level: configuration.logLevel)
    let tracing = try ServiceProcess.bootstrapTracing("rescind-grant-service")
    let logger = Logger(label: "rescind.grant-service")
    let app = try await GrantServiceApplication.build(configuration: configuration, logger: logger) { port in
        logger.info("grant service listening", metadata: [LogKey.port: "\(port)"])
    } onMetricsServerRunning: { port in
        logger.info("grant service metrics listening", metadata: [LogKey.port: "\(port)"])
    }
    try await ServiceProcess.serve(app, tracing: tracing, shutdownGrace: configuration.shutdownGrace, logger: logger)
}
