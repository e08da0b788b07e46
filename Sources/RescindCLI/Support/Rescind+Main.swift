import ArgumentParser
import Foundation
import RescindClient

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Rescind {
    /// ArgumentParser's entry point, with failures of the transport turned into one line a
    /// person can act on (Foundation's own description of a refused connection is a dump of
    /// its user-info dictionary).
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var command = command as? AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            let shown = presentable(error)
            guard let status = ExitStatus(of: error) ?? ExitStatus(of: shown) else { exit(withError: shown) }
            FileHandle.standardError.write(Data((fullMessage(for: shown) + "\n").utf8))
            Foundation.exit(status.rawValue)
        }
    }

    static func presentable(_ error: any Error) -> any Error {
        // A service that cannot be reached: its own one-line message, without "(HTTP 0, unreachable)".
        if let error = error as? GrantServiceError, error.status == 0 { return CLIError(error.message) }
        // A key history this client refused as unverifiable: what, why, and that nothing was used.
        if let error = error as? KeyHistoryError { return CLIError(error.description) }
        // Foundation's URL errors (the demo's readiness probes): ArgumentParser's own (help, usage,
        // exit codes) pass through untouched.
        guard let urlError = error as? URLError else { return error }
        let error = urlError as NSError
        let url = urlError.failingURL
            .map { "\($0.scheme ?? "http")://\($0.host ?? "?")\($0.port.map { ":\($0)" } ?? "")" } ?? "the service"
        let underlying = (error.userInfo[NSUnderlyingErrorKey] as? NSError)?.userInfo[NSLocalizedDescriptionKey] as? String
        let reason = (error.userInfo[NSLocalizedDescriptionKey] as? String) ?? underlying ?? "URL error \(error.code)"
        return CLIError("cannot reach \(url): \(reason.replacingOccurrences(of: "\n", with: " "))")
    }
}
