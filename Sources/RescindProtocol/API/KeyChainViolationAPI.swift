import Foundation
import RescindMacros

/// A report as the audit service keeps it: the client's report, how the service knows who
/// sent it, and when it arrived.
@MemberwiseInit
public struct KeyChainViolationRecord: Codable, Sendable, Equatable {
    public var violation: KeyChainViolation
    public var verification: AuditNotification.ReporterVerification
    public var receivedAt: Date
}

/// `GET /v1/key-chain-violations`: the most recent reports, newest first.
@MemberwiseInit
public struct KeyChainViolationList: Codable, Sendable, Equatable {
    public var violations: [KeyChainViolationRecord]
}

/// `POST /v1/key-chain-violations` answered 201: the report is stored and announced.
@MemberwiseInit
public struct KeyChainViolationReceipt: Codable, Sendable, Equatable {
    public var reportID: UUID
    public var verification: AuditNotification.ReporterVerification
}
