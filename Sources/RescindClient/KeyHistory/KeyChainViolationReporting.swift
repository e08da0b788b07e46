import RescindProtocol

/// Where a client sends what its key-history verification refused. The verifier calls it
/// after refusing a key and keeping what it had; an implementation never throws back into
/// the verifier (a report that cannot be delivered is logged and retried by its transport).
///
/// The CLI reports to the audit service over HTTPS; an agent signs the report with its
/// device key onto `device_acks`.
public protocol KeyChainViolationReporting: Sendable {
    func report(_ violation: KeyChainViolation) async
}

/// Reports nowhere: for callers that only want the refusal (tests of the verifier itself).
public struct DiscardingKeyChainViolationReporter: KeyChainViolationReporting {
    public init() {}
    public func report(_ violation: KeyChainViolation) async {}
}
