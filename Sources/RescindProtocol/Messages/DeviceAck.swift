import Foundation
import RescindMacros

/// A device's signed answer to a command, on `device_acks`.
@MemberwiseInit
public struct DeviceAck: Codable, Sendable, Equatable {
    public static let schema = "rescind.device_ack.v1"

    public enum Outcome: String, Codable, Sendable, CaseIterable {
        /// The device rotated or erased as commanded.
        case applied
        /// The device had already done it (redelivery, or it self-healed first).
        case alreadyApplied = "already_applied"
        /// The device could not comply; `error` says why.
        case failed
        /// Not an answer yet: the command is stored in the device's inbox (its signed receipt).
        case delivered
        /// Not an answer yet: the device is locked and holds the command sealed until the unlock.
        case notNow = "not_now"
        /// The device had already moved past this revocation by healing (comparing versions with
        /// the grant service) before the command reached it; as final as `already_applied`.
        case healed

        /// Whether this outcome answers the command (`applied`, `already_applied`, `healed`,
        /// `failed`); `delivered` and `not_now` are receipts on the way to one.
        public var isFinal: Bool {
            switch self {
            case .applied, .alreadyApplied, .failed, .healed: true
            case .delivered, .notNow: false
            }
        }
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
    /// Set when `commandID` is a re-issue: the grant service's command it carried.
    public var originalCommandID: UUID? = nil
    /// Set when `commandID` is a re-issue: its attempt number (the original is attempt 1).
    public var attempt: Int? = nil
    /// Set on a receipt signed by the device's receipt key (signer `device:<uuid>/receipts`):
    /// the device key's certificate of that key. Only `delivered` and `not_now` may carry one;
    /// an answer is always signed by the device key itself.
    public var receiptCertificate: SignedMessage<ReceiptKeyCertificate>? = nil

    enum CodingKeys: String, CodingKey {
        case ackID, commandID, eventID, deviceID, action = "type", outcome, recordsProcessed, fmkVersion, durationMs, error, ackedAt, originalCommandID, attempt, receiptCertificate
    }
}
