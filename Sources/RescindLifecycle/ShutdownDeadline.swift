import Dispatch
import Foundation
import Logging
import RescindMacros
import RescindObservability
import ServiceLifecycle

/// Bounds a process's graceful shutdown: once shutdown begins (SIGTERM or SIGINT, or a service
/// that ended or failed), the rest of the process has `grace` to finish; if it is still running
/// then, one critical log line says so and the process exits with `exitStatus` at once.
///
/// A service whose database stopped answering (a partition, a frozen host: no reset ever comes)
/// waits for ever on the query in hand, and graceful shutdown waits for that service: without a
/// bound the process outlived SIGTERM until the orchestrator's SIGKILL, saying nothing.
///
/// List it **last** in the process's outermost `ServiceGroup`: graceful shutdown reaches services in
/// reverse order, one after the other, so only the last one listed is sure to hear of it. The clock
/// runs on a dispatch queue, not on Swift's cooperative pool, which blocked work can starve. For
/// processes only (the `main` of a service or the agent): it ends the whole process, so an
/// in-process test harness never adds it.
@MemberwiseInit
public struct ShutdownDeadline: Service {
    /// The exit status of a process whose graceful shutdown ran out of time (1 is a failure at
    /// start-up or while running; 0 a graceful shutdown that finished).
    public static let exitStatus: Int32 = 3

    /// How long graceful shutdown may take; keep it under the orchestrator's own (Kubernetes'
    /// `terminationGracePeriodSeconds`, 30 s by default), so that this line comes before its SIGKILL.
    public let grace: Duration
    private let logger: Logger

    public func run() async throws {
        // Returns on graceful shutdown, throws on cancellation: either way shutdown has begun.
        try? await gracefulShutdown()
        Self.arm(grace: grace, logger: logger)
    }

    /// Starts the clock; when it runs out the process ends with `exitStatus`.
    static func arm(grace: Duration, logger: Logger) {
        let seconds = grace.seconds
        logger.info("shutting down", metadata: [LogKey.graceSeconds: "\(seconds)"])
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
            logger.critical(
                "graceful shutdown did not finish within the grace period; exiting",
                metadata: [LogKey.graceSeconds: "\(seconds)", LogKey.exitStatus: "\(exitStatus)"])
            fflush(nil)
            // `_exit`, not `exit`: exit handlers could wait on the very thing that is stuck.
            _exit(exitStatus)
        }
    }
}
