import ServiceLifecycle

/// Runs a service loop until graceful shutdown or cancellation, which end it normally.
func runUntilShutdown(_ loop: @Sendable @escaping () async throws -> Void) async throws {
    do {
        try await cancelWhenGracefulShutdown(loop)
    } catch is CancellationError {
        return
    }
}
