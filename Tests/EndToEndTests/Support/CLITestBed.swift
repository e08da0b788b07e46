import Foundation
import RescindTestSupport
import Testing

/// A real grant service (and, when asked, a real audit service on its cluster and topics)
/// plus a scratch directory for the profiles of the people in a test.
struct CLITestBed: Sendable {
    let grant: GrantServiceHarness
    let audit: AuditServiceHarness?
    let root: URL

    /// Runs `body` against fresh services; always tears them down and removes the profiles.
    static func with<Result>(audit: Bool = false, _ body: (CLITestBed) async throws -> Result) async throws -> Result {
        try #require(RescindProcess.isBuilt, "build the products first: \(RescindProcess.binary.path) is missing")
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("rescind-cli-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: root) }
        return try await GrantServiceHarness.with { grant in
            if audit {
                return try await AuditServiceHarness.with(auditing: grant) { audit in
                    try await body(CLITestBed(grant: grant, audit: audit, root: root))
                }
            }
            return try await body(CLITestBed(grant: grant, audit: nil, root: root))
        }
    }

    /// A profile that is not enrolled yet.
    func profile(_ name: String) throws -> CLIProfile {
        let slug = name.lowercased().replacingOccurrences(of: " ", with: "-")
        let keyFile = root.appendingPathComponent("keys/\(slug).key")
        if !FileManager.default.fileExists(atPath: keyFile.path) { try CLIProfile.makeKeyFile(at: keyFile) }
        return CLIProfile(
            name: name, directory: root.appendingPathComponent("profiles/\(slug)"), keyFile: keyFile,
            grantService: grant.baseURL, auditService: audit?.baseURL, userID: "", deviceID: "")
    }

    /// `rescind identity create --name <name>`; the profile knows its user id, and the recovery
    /// words it printed are kept in a file beside the profiles (the person's paper).
    func person(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> CLIProfile {
        let blank = try profile(name)
        let created = try await blank.ok(["identity", "create", "--name", name], sourceLocation: sourceLocation)
        let userID = try #require(Self.value(after: "user", in: created), "\(created)", sourceLocation: sourceLocation)
        let deviceID = try #require(Self.value(after: "device", in: created), "\(created)", sourceLocation: sourceLocation)
        let paper = root.appendingPathComponent("paper/\(blank.directory.lastPathComponent).txt")
        try FileManager.default.createDirectory(at: paper.deletingLastPathComponent(), withIntermediateDirectories: true)
        try CLITests.Identity.recoveryWords(in: created).joined(separator: " ").write(to: paper, atomically: true, encoding: .utf8)
        return CLIProfile(
            name: name, directory: blank.directory, keyFile: blank.keyFile, grantService: blank.grantService,
            auditService: blank.auditService, userID: userID, deviceID: deviceID, recoveryWords: paper)
    }

    /// The first word after `label` at the start of a line ("user   6f1c…").
    static func value(after label: String, in text: String) -> String? {
        for line in text.split(separator: "\n") {
            let words = line.split(separator: " ")
            if words.first.map(String.init) == label, words.count > 1 { return String(words[1]) }
        }
        return nil
    }

    /// Polls `attempt` until it returns a value (each attempt may run the CLI).
    static func eventually<T>(
        _ what: String, timeout: Duration = .seconds(30), _ attempt: () async throws -> T?
    ) async throws -> T {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let value = try await attempt() { return value }
            guard ContinuousClock.now < deadline else { throw CLITestError("timed out waiting for \(what)") }
            try await Task.sleep(for: .milliseconds(300))
        }
    }
}

extension String {
    /// The text without surrounding white space (a printed id).
    var trimmed: String { trimmingCharacters(in: .whitespacesAndNewlines) }
}
