import RescindClient
import RescindProtocol
import Synchronization

/// Collects what an honest client or agent reported, for tests that play a compromised service.
public final class CollectingReporter: KeyChainViolationReporting {
    private let reports = Mutex<[KeyChainViolation]>([])

    public init() {}

    public func report(_ violation: KeyChainViolation) async { reports.withLock { $0.append(violation) } }
    public var codes: [KeyChainViolation.Code] { reports.withLock { $0.map(\.code) } }
    public var violations: [KeyChainViolation] { reports.withLock { $0 } }
}
