import ArgumentParser
import Foundation
import RescindClient
import RescindTracing
import Tracing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Rescind {
    /// ArgumentParser's entry point, with failures of the transport turned into one line a
    /// person can act on (Foundation's own description of a refused connection is a dump of
    /// its user-info dictionary).
    static func main() async {
        do {
            let command = try parseAsRoot()
            let tracing = try OTLPExporter.bootstrap(serviceName: "rescind", environment: ProcessInfo.processInfo.environment)
            var failure: (any Error)?
            // One trace per command: its root span, then a client span per request.
            let span = InstrumentationSystem.tracer.startAnySpan("rescind \(Self.name(of: command))")
            do {
                try await Self.run(command, in: span.context)
            } catch {
                span.recordError(error)
                failure = error
            }
            span.end()
            // The command's spans go out before the process ends, within the exporter's deadline.
            await tracing?.sendQueued()
            if let failure { throw failure }
        } catch {
            let shown = presentable(error)
            guard let status = ExitStatus(of: error) ?? ExitStatus(of: shown) else { exit(withError: shown) }
            FileHandle.standardError.write(Data((fullMessage(for: shown) + "\n").utf8))
            Foundation.exit(status.rawValue)
        }
    }

    /// Runs the command with `context` current, so that its requests are children of its span.
    nonisolated static func run(_ command: sending any ParsableCommand, in context: ServiceContext) async throws {
        var command = command
        try await ServiceContext.$current.withValue(context) {
            if var asynchronous = command as? AsyncParsableCommand {
                try await asynchronous.run()
            } else {
                try command.run()
            }
        }
    }

    /// `identity create`, `revoke`: the words that name the command, never its arguments.
    static func name(of command: any ParsableCommand) -> String {
        func path(to target: any ParsableCommand.Type, from node: any ParsableCommand.Type) -> [String]? {
            if ObjectIdentifier(node) == ObjectIdentifier(target) { return [] }
            for child in node.configuration.subcommands {
                if let rest = path(to: target, from: child) { return [child._commandName] + rest }
            }
            return nil
        }
        return path(to: type(of: command), from: Rescind.self)?.joined(separator: " ") ?? "command"
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
