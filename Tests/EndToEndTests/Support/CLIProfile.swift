import Foundation
import RescindCrypto
import Testing

/// One person's `rescind` profile: an encrypted keystore in its own directory, unlocked by a
/// 32-byte key file (no Argon2id per call, which keeps each CLI run quick).
struct CLIProfile: Sendable {
    let name: String
    let directory: URL
    let keyFile: URL
    let grantService: URL
    let auditService: URL?
    let userID: String
    let deviceID: String
    /// The file holding the recovery words `identity create` printed (nil for a profile copied
    /// or enrolled from another: the paper stays with its owner).
    var recoveryWords: URL? = nil

    var environment: [String: String] { ["RESCIND_KEY_FILE": keyFile.path] }

    /// `rescind arguments --profile … --grant-service … [--audit-service …]`.
    func run(_ arguments: [String], timeout: Duration = .seconds(90)) async throws -> RescindProcess.Output {
        var options = ["--profile", directory.path, "--grant-service", grantService.absoluteString]
        if let auditService { options += ["--audit-service", auditService.absoluteString] }
        return try await RescindProcess.run(arguments + options, environment: environment, timeout: timeout)
    }

    /// Runs a command that must succeed; returns its standard output.
    @discardableResult
    func ok(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        let output = try await run(arguments)
        try #require(output.status == 0 && !output.timedOut, "\(output)", sourceLocation: sourceLocation)
        return output.stdout
    }

    /// Writes a fresh key file for a profile (0600, 32 random bytes).
    static func makeKeyFile(at url: URL) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        guard FileManager.default.createFile(
            atPath: url.path, contents: Data(SecureRandom.bytes(count: 32)), attributes: [.posixPermissions: 0o600])
        else { throw CLITestError("cannot write \(url.path)") }
    }
}

struct CLITestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
