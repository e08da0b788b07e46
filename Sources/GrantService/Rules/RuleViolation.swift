/// A business rule of the grant service that a request broke, with a stable `code` and a message
/// for people. What a violation becomes in HTTP (its status) is decided in one place, the HTTP
/// layer (`RuleViolation+HTTP.swift`); rules and stores never name a status.
struct RuleViolation: Error, Equatable, Sendable {
    enum Kind: Sendable {
        /// The request itself is ill-formed (a field out of its limits, a batch naming a record twice).
        case malformed
        /// Well-formed, but a rule forbids it (revoking the owner, grants that do not match).
        case refused
        /// What the request names does not exist (or expired).
        case notFound
        /// The caller may not do this (not the owner, access revoked or being revoked).
        case notAllowed
        /// The state moved on since the client read it (another version, a rotated key).
        case conflict
        /// The calling device can no longer authenticate (retired while its call ran).
        case unauthenticated
        /// What the request names existed but its time is over (a restore window that passed).
        case expired
    }

    let kind: Kind
    let code: String
    let message: String

    static func malformed(_ message: String) -> RuleViolation { RuleViolation(kind: .malformed, code: "bad_request", message: message) }
    static func notFound(_ what: String) -> RuleViolation { RuleViolation(kind: .notFound, code: "not_found", message: "\(what) not found") }
    static func refused(_ code: String, _ message: String) -> RuleViolation { RuleViolation(kind: .refused, code: code, message: message) }
}
