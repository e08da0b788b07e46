import Foundation
import RescindMacros

/// The signed commands a device was sent, for the device itself to fetch what it missed
/// (`GET /v1/devices/self/commands?after=…`): an agent offline for longer than the topic keeps
/// messages still gets each command at its next check-in (the MDM model).
@MemberwiseInit
public struct DeviceCommandList: Codable, Sendable, Equatable {
    @MemberwiseInit
    public struct Entry: Codable, Sendable, Equatable {
        /// The position to pass as `after` to get the entries after this one.
        public var seq: Int64
        public var commandID: UUID
        /// The envelope exactly as published on `device_commands`, signed by the grant service:
        /// the agent verifies it as it verifies one read from Kafka.
        public var envelope: Data
        /// The W3C `traceparent` of the revocation that sent the command, when it was traced: a
        /// device that takes the command in here links its answer to that trace. Not signed, and
        /// only ever a link: a wrong one misleads a trace viewer, never the device.
        public var traceparent: String? = nil
    }

    /// Oldest first, at most `limit`.
    public var commands: [Entry]
}
