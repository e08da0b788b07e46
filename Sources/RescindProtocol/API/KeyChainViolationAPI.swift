import Foundation

/// A report as the audit service keeps it: the client's report, how the service knows who
/// sent it, and when it arrived.
public struct KeyChainViolationRecord: Codable, Sendable, Equatable {
    public var violation: KeyChainViolation
    public var verification: AuditNotification.ReporterVerification
    public var receivedAt: Date

    public init(violation: KeyChainViolation, verification: AuditNotification.ReporterVerification, receivedAt: Date) {
        self.violation = violation
        self.verification = verification
        self.receivedAt = receivedAt
    }
}

/// `GET /v1/key-chain-violations`: the most recent reports, newest first.
public struct KeyChainViolationList: Codable, Sendable, Equatable {
    public var violations: [KeyChainViolationRecord]

    public init(violations: [KeyChainViolationRecord]) {
        self.violations = violations
    }
}

/// `POST /v1/key-chain-violations` answered 201: the report is stored and announced.
public struct KeyChainViolationReceipt: Codable, Sendable, Equatable {
    public var reportID: UUID
    public var verification: AuditNotification.ReporterVerification

    public init(reportID: UUID, verification: AuditNotification.ReporterVerification) {
        self.reportID = reportID
        self.verification = verification
    }
}
