import Foundation
import RescindKafka
import RescindPostgres
import RescindProtocol

/// What a failure to handle an input message says about that message.
///
/// Transient failures (the database or broker unreachable, timeouts, serialization
/// failures, lock or resource exhaustion) are retried on the same message. Everything
/// else depends on the message's content (a value PostgreSQL refused, a constraint,
/// an error nobody expected) and would fail the same way forever: the message is
/// quarantined and the partition moves on.
enum HandlingFailure: Equatable, Sendable {
    case transient
    /// The message is at fault; `reason` is the stable rejection code stored and published.
    case content(reason: String)

    static func classify(_ error: any Error) -> HandlingFailure {
        switch error {
        case let error as PostgresError: classify(error)
        case is KafkaError, is CancellationError: .transient
        case is MessageError, is DecodingError: .content(reason: "malformed")
        default: .content(reason: "unprocessable")
        }
    }

    static func classify(_ error: PostgresError) -> HandlingFailure {
        if error.isUnavailable { return .transient }  // unreachable, lost, or no answer in time (`.timedOut`)
        switch error.code {
        case .server:
            guard let state = error.sqlState else { return .transient }
            // 08 connection, 40 serialization failure/deadlock, 53 insufficient resources,
            // 55 lock not available, 57 admin shutdown/query canceled (timeouts), 58 system, XX internal;
            // 42 (undefined table, permission denied): the statements are fixed, so that is the
            // deployment's fault, not the message's (the retry budget still ends it).
            if ["08", "40", "42", "53", "55", "57", "58", "XX"].contains(where: state.hasPrefix) { return .transient }
            // 22 data exception (NUL, out of range), 23 integrity constraint: the message's values.
            return .content(reason: "unprocessable")
        default:
            return .content(reason: "unprocessable")
        }
    }
}
