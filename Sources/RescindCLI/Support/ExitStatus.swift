import ArgumentParser
import Foundation
import RescindClient
import RescindCrypto
import RescindProtocol

/// Why `rescind` failed, as its exit status: distinct, so that a script can tell a refusal it
/// may retry or report from a verification failure it must never retry past.
enum ExitStatus: Int32, CaseIterable {
    /// Anything not below: the profile, its passphrase, a local file.
    case failure = 1
    /// This client refused what it was served: a key history, a pinned identity, a signature, an
    /// access-log chain. Nothing served was used.
    case verificationFailed = 2
    /// The grant or audit service answered with an error (the one line says which and why).
    case refused = 3
    /// No answer from the service: not running, not reachable, or TLS refused.
    case unreachable = 4

    /// The usage error's status, ArgumentParser's (BSD's `EX_USAGE`).
    static let usage: Int32 = 64

    /// The status for `error`; nil for ArgumentParser's own (help, version, usage, `ExitCode`).
    init?(of error: any Error) {
        switch error {
        case let error as GrantServiceError: self = error.status == 0 ? .unreachable : .refused
        case is URLError: self = .unreachable
        case is KeyHistoryError, is IdentityPinsError, is MessageError: self = .verificationFailed
        case is CLIError, is CryptoError, is RecoveryKeyError, is InvitationError: self = .failure
        default: return nil
        }
    }

    /// The table every `--help` of `rescind` ends with.
    static let helpText = """
        Exit status: 0 done; 1 failed here (profile, passphrase, a file); 2 verification failed
        (a key history, pinned identity, signature or access-log chain this client refused);
        3 refused by the service; 4 the service cannot be reached; 64 usage error.
        """
}
