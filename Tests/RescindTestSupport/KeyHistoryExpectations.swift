import RescindClient
import RescindProtocol
import Testing

/// Expects `body` to be refused by a key history check with `code` (`KeyHistoryError`): an
/// answer that goes through, or fails another way, is recorded as an issue at the caller.
public func expectKeyHistoryRefused(
    _ code: KeyChainViolation.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void
) async {
    do {
        try await body()
        Issue.record("accepted; expected \(code.rawValue)", sourceLocation: sourceLocation)
    } catch let error as KeyHistoryError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("unexpected \(error)", sourceLocation: sourceLocation)
    }
}
