import Foundation
import GrantService
import Logging

// rescind-grant-service: configuration from RESCIND_* environment variables (see README).
do {
    let configuration = try GrantServiceConfiguration(environment: ProcessInfo.processInfo.environment)
    let level = Logger.Level(rawValue: configuration.logLevel) ?? .info
    LoggingSystem.bootstrap { label in
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = level
        return handler
    }
    let logger = Logger(label: "rescind.grant-service")
    let app = try await GrantServiceApplication.build(configuration: configuration, logger: logger) { port in
        logger.info("grant service listening", metadata: ["port": "\(port)"])
    }
    try await app.runService()
} catch {
    FileHandle.standardError.write(Data("rescind-grant-service: \(error)\n".utf8))
    exit(1)
}
