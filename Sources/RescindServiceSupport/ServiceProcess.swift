import Foundation
import Logging

/// How a Rescind service process starts and ends, the same for every service so that an
/// operator reads each the same way: log lines on standard error at the configured level,
/// and a failure (a bad setting, an unreachable database) as one line `<program>: <error>`
/// on standard error with exit status 1.
public enum ServiceProcess {
    /// Runs `body` (read the configuration, build the application, run it until
    /// SIGTERM/SIGINT) and returns when it does; a thrown error ends the process as above.
    public static func run(_ program: String, _ body: () async throws -> Void) async {
        do {
            try await body()
        } catch {
            FileHandle.standardError.write(Data("\(program): \(error)\n".utf8))
            exit(1)
        }
    }

    /// Sends every `Logger` to standard error at `level` (a swift-log level name such as
    /// `debug`; anything else means `info`). Call once, before the first `Logger` is made.
    public static func bootstrapLogging(level: String) {
        let level = Logger.Level(rawValue: level) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
    }
}
