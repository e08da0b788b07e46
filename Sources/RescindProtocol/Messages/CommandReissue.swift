import Foundation
import RescindMacros

/// The audit service's request that a device carry out again the command a revocation sent it,
/// on `device_commands` (key: the device), signed by the audit service (`audit-service`).
///
/// It carries no instruction of its own: the agent acts only on the grant service's signed
/// command for `eventID` that it holds (or fetches from the grant service at check-in), under a
/// new command id (`reissueID`) that its ack names with the original and the attempt. Commands
/// are idempotent and an agent never moves to a lower FMK version, so a replayed or forged-by-
/// the-audit-service re-issue can at worst make a device redo what it already did.
@MemberwiseInit
public struct CommandReissue: Codable, Sendable, Equatable {
    public static let schema = "rescind.command_reissue.v1"
    public static let signer = "audit-service"

    /// The new command id: the ack of this attempt names it.
    public var reissueID: UUID
    public var eventID: UUID
    public var deviceID: UUID
    /// The grant service's command, when the audit service knows it (from a failed ack).
    public var originalCommandID: UUID?
    /// 2 for the first re-issue (the grant service's command is attempt 1).
    public var attempt: Int
    public var issuedAt: Date
}

extension CommandReissue: BoundaryValidated {
    public func validate() throws(MessageError) {
        let check = FieldCheck()
        try check.integer(attempt, "attempt", in: 2...MessageLimits.maxInteger)
        try check.timestamp(issuedAt, "issued_at")
    }
}
