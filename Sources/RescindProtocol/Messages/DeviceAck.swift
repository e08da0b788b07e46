import Foundation

/// A device's signed answer to a command, on `device_acks`.
public struct DeviceAck: Codable, Sendable, Equatable {
    public static let schema = "rescind.device_ack.v1"

    public enum Outcome: String, Codable, Sendable, CaseIterable {
        /// The device rotated or erased as commanded.
        case applied
        /// The device had already done it (redelivery, or it self-healed first).
        case alreadyApplied = "already_applied"
        /// The device could not comply; `error` says why.
        case failed
    }

    public var ackID: UUID
    public var commandID: UUID
    public var eventID: UUID
    public var deviceID: UUID
    public var action: DeviceAction
    public var outcome: Outcome
    public var recordsProcessed: Int
    /// The FMK version the device holds after acting (0 once it erased).
    public var fmkVersion: Int
    public var durationMs: Int
    public var error: String?
    public var ackedAt: Date

    public init(
        ackID: UUID, commandID: UUID, eventID: UUID, deviceID: UUID, action: DeviceAction,
        outcome: Outcome, recordsProcessed: Int, fmkVersion: Int, durationMs: Int,
        error: String?, ackedAt: Date
    ) {
        self.ackID = ackID
        self.commandID = commandID
        self.eventID = eventID
        self.deviceID = deviceID
        self.action = action
        self.outcome = outcome
        self.recordsProcessed = recordsProcessed
        self.fmkVersion = fmkVersion
        self.durationMs = durationMs
        self.error = error
        self.ackedAt = ackedAt
    }

    enum CodingKeys: String, CodingKey {
        case ackID = "ack_id", commandID = "command_id", eventID = "event_id", deviceID = "device_id"
        case action = "type", outcome, recordsProcessed = "records_processed"
        case fmkVersion = "fmk_version", durationMs = "duration_ms", error, ackedAt = "acked_at"
    }
}
