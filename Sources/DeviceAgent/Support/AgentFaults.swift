import Foundation
import RescindProtocol

/// The injection point where the dev kit makes the agent fail as a crash would, to show it
/// converges (`RescindDevKit`'s `AgentFaultPlans` builds the faulting plans). Every hook
/// defaults to doing nothing, and production agents use `AgentFaults()`: the product holds
/// no fault of its own.
package struct AgentFaults: Sendable {
    /// Runs after a command is safely in the inbox, before its Kafka offset is committed.
    package var beforeOffsetCommit: @Sendable (KafkaMessageInfo) async throws -> Void = { _ in }
    /// Runs inside a command's transaction after its change and ack were written, before
    /// COMMIT; throwing rolls all of it back.
    package var beforeCommandCommit: @Sendable (DeviceCommand) throws -> Void = { _ in }
    /// `false` keeps acks in the outbox (as if the process died before publishing).
    package var publishAcks = true
    /// `false` runs the agent without its self-heal service, for tests whose subject is the
    /// command path: a self-heal pass that reaches the grant service after a revocation
    /// rotates or erases by itself, and the command then finds nothing left to do.
    package var selfHeals = true
    /// Runs when a command reaches a named step (`AgentStep`), on the path that carries it
    /// out; the dev kit's `AgentFaultPlans.stop(at:)` freezes the process there (SIGSTOP) so
    /// that a test can kill it exactly at that step.
    package var atStep: @Sendable (AgentStep) -> Void = { _ in }

    /// A failure to report instead of carrying out a command (its text becomes the `failed`
    /// ack's error); `nil` carries it out.
    package var failCommand: @Sendable (DeviceCommand) -> String? = { _ in nil }

    package init() {}

    /// Which message a hook is about (no payload).
    package struct KafkaMessageInfo: Sendable {
        package var partition: Int32
        package var offset: Int64
        package var commandID: UUID?
    }
}
