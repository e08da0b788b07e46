import Foundation
import RescindProtocol

/// Points where tests make the agent fail as a crash would, to show it converges.
/// Production agents use `AgentFaults()`, which does nothing.
struct AgentFaults: Sendable {
    /// Runs after a command is safely in the inbox, before its Kafka offset is committed.
    var beforeOffsetCommit: @Sendable (KafkaMessageInfo) async throws -> Void = { _ in }
    /// Runs inside a command's transaction after its change and ack were written, before
    /// COMMIT; throwing rolls all of it back.
    var beforeCommandCommit: @Sendable (DeviceCommand) throws -> Void = { _ in }
    /// `false` keeps acks in the outbox (as if the process died before publishing).
    var publishAcks = true
    /// `false` runs the agent without its self-heal service, for tests whose subject is the
    /// command path: a self-heal pass that reaches the grant service after a revocation
    /// rotates or erases by itself, and the command then finds nothing left to do.
    var selfHeals = true

    init() {}

    /// Which message a hook is about (no payload).
    struct KafkaMessageInfo: Sendable {
        var partition: Int32
        var offset: Int64
        var commandID: UUID?
    }
}
