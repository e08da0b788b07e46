import Foundation

/// Every call to the grant service goes through `run`, which turns its failures into
/// `AgentError` by what the agent should do about them.
package enum GrantServiceCall {
    /// Grant-service and transport failures as `AgentError`: 403 is a revocation, transport
    /// trouble (status 0) and 5xx are worth retrying, anything else is a refusal.
    package static func run<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as GrantServiceError {
            switch error.status {
            case 403: throw AgentError(.accessRevoked, "the grant service answered 403 (\(error.code))")
            case 0, 408, 429, 500...599: throw AgentError(.unavailable, "grant service unavailable: \(error)")
            default: throw AgentError(.serviceRefused, "grant service refused: \(error)")
            }
        } catch let error as KeyHistoryError {
            throw AgentError(.keyHistoryRefused, error.description)
        } catch let error as AgentError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw AgentError(.unavailable, "grant service request failed (\(type(of: error)))")
        }
    }
}
