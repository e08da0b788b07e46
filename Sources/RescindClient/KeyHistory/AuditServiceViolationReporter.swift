import Foundation
import RescindObservability
import RescindProtocol

/// The CLI's `KeyChainViolationReporting`: sends the report to the audit service over HTTPS
/// (`POST /v1/key-chain-violations`) as this profile's device. It never throws back: a
/// failure the service or the network may get over (no answer, 5xx, 429) is retried a few
/// times with a growing pause; a report the service already has (409 `duplicate_report`)
/// counts as delivered; anything else is given up. What was not delivered is told through
/// `notice` (standard error by default), so the user knows the report did not leave.
public struct AuditServiceViolationReporter: KeyChainViolationReporting {
    let audit: AuditServiceClient
    let attempts: Int
    let pause: Duration
    let notice: @Sendable (String) -> Void

    public init(
        audit: AuditServiceClient, attempts: Int = 3, pause: Duration = .milliseconds(500),
        notice: @escaping @Sendable (String) -> Void = AuditServiceViolationReporter.standardError
    ) {
        self.audit = audit
        self.attempts = max(attempts, 1)
        self.pause = pause
        self.notice = notice
    }

    public func report(_ violation: KeyChainViolation) async {
        var report = violation
        report.detail = MessageLimits.safeText(report.detail, maxLength: MessageLimits.errorLength)
        var lastProblem = ""
        var backoff = Backoff(first: pause, maximum: pause * 4)
        for attempt in 1...attempts {
            do {
                try await audit.reportKeyChainViolation(report)
                return
            } catch let error as GrantServiceError where error.status == 409 && error.code == "duplicate_report" {
                return
            } catch let error as GrantServiceError where !(error.status >= 500 || error.status == 429) {
                notice("the key chain violation could not be reported to the audit service: \(error)")
                return
            } catch {
                lastProblem = "\(error)"
            }
            if attempt < attempts { try? await Task.sleep(for: backoff.next()) }
        }
        notice("the key chain violation could not be reported to the audit service: \(lastProblem)")
    }

    public static let standardError: @Sendable (String) -> Void = { line in
        FileHandle.standardError.write(Data(("rescind: " + line + "\n").utf8))
    }
}
