import AuditService
import Foundation
import Logging

// rescind-audit-service: configuration from RESCIND_* environment variables (see README).
do {
    let configuration = try AuditServiceConfiguration(environment: ProcessInfo.processInfo.environment)
    let level = Logger.Level(rawValue: configuration.logLevel) ?? .info
    LoggingSystem.bootstrap { label in
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = level
        return handler
    }
    let logger = Logger(label: "rescind.audit-service")
    let app = try await AuditServiceApplication.build(configuration: configuration, logger: logger) { port in
        logger.info("audit service listening", metadata: ["port": "\(port)"])
    }
    try await app.runService()
} catch {
    FileHandle.standardError.write(Data("rescind-audit-service: \(error)\n".utf8))
    exit(1)
}
