import Foundation
import RescindCrypto
import RescindDevKit
import RescindTestSupport
import Testing

@testable import AuditService

#if canImport(Glibc)
import Glibc
#endif

/// The audit service's operator token and signing key as platforms mount them
/// (`SecretFile`'s rule): a Kubernetes Secret and a Compose secret are accepted; a token open
/// to others, another user's or unreadable is refused with what is wrong.
@Suite("Secrets as platforms mount them: the operator token", .serialized, .enabled(if: MountedSecrets.isRoot))
struct MountedOperatorTokenTests {
    static let token = "op-" + String(repeating: "t", count: 40)

    @Test("a Kubernetes Secret (..data symlinks, root-owned, 0440 with the fsGroup) and Compose secrets hold the token")
    func acceptedLayouts() throws {
        let secrets = try MountedSecrets()
        defer { secrets.remove() }
        let contents = Data((Self.token + "\n").utf8)
        for path in [
            try secrets.kubernetes(volume: "operator-token", key: "token", contents: contents, mode: 0o440),
            try secrets.compose(name: "audit_operator_token", contents: contents, mode: 0o400),
            try secrets.compose(name: "audit_operator_token_600", contents: contents, mode: 0o600),
        ] {
            let token = try OperatorToken(file: path)
            #expect(token.matches(Self.token) && !token.matches(Self.token + "x"), "\(path)")
        }
    }

    @Test("a token open to others or another user's is refused, naming the variable, the file and the problem")
    func refusals() throws {
        let secrets = try MountedSecrets()
        defer { secrets.remove() }
        let contents = Data(Self.token.utf8)
        let cases: [(String, String)] = [
            (try secrets.kubernetes(volume: "world", key: "token", contents: contents, mode: 0o444), "is open to other users (mode 0444)"),
            (try secrets.file("stranger", contents: contents, mode: 0o400, owner: 4242, group: 4242), "belongs to uid 4242"),
        ]
        for (path, problem) in cases {
            let error = #expect(throws: AuditServiceError.self) { try OperatorToken(file: path) }
            let text = "\(error.map { "\($0)" } ?? "")"
            #expect(text.contains("RESCIND_AUDIT_OPERATOR_TOKEN_FILE \(path) \(problem)"), "\(text)")
            #expect(!text.contains(Self.token))
        }
    }

    /// The real executable as the pod's user (uid 10001, the fsGroup its only extra group) with
    /// its key and token in Secret volumes: past both, it stops only at the database this test
    /// gives it (none). A token volume without the fsGroup is named as unreadable.
    @Test("rescind-audit-service as the pod's user reads its key and token from Secrets and names one it cannot read")
    func theServiceAsThePodsUser() async throws {
        let executable = try #require(MountedSecrets.builtExecutable("rescind-audit-service"), "rescind-audit-service is not built next to the tests")
        let secrets = try MountedSecrets()
        defer { secrets.remove() }
        let key = try secrets.kubernetes(volume: "signing-key", key: "key", contents: Data(SecureRandom.bytes(count: 32)), mode: 0o440)
        let token = try secrets.kubernetes(volume: "operator-token", key: "token", contents: Data(Self.token.utf8), mode: 0o440)
        let closedToken = try secrets.kubernetes(volume: "closed-token", key: "token", contents: Data(Self.token.utf8), mode: 0o400, group: 0)
        func run(token: String) async throws -> ChildProcess.Result {
            try await MountedSecrets.runAsPodUser(
                executable, [],
                environment: [
                    "PATH": "/usr/bin:/bin",
                    "RESCIND_AUDIT_SIGNING_KEY_FILE": key, "RESCIND_AUDIT_CREATE_SIGNING_KEY": "false",
                    "RESCIND_AUDIT_OPERATOR_TOKEN_FILE": token,
                    "RESCIND_GRANT_SERVICE_PUBLIC_KEY": Data(Ed25519.PrivateKey().publicKey.rawRepresentation).base64EncodedString(),
                    "RESCIND_AUDIT_HOST": "127.0.0.1", "RESCIND_AUDIT_PORT": "0",
                    "RESCIND_DATABASE_URL": "postgres://nobody@127.0.0.1:1/none", "RESCIND_DATABASE_TIMEOUT_SECONDS": "2",
                    "RESCIND_KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:1",
                ],
                timeout: .seconds(60))
        }
        let accepted = try await run(token: token)
        #expect(!accepted.timedOut && accepted.status == 1, "\(accepted.output)")
        // Past the key and the token, the first thing it opens: the database (none here).
        #expect(accepted.output.hasPrefix("rescind-audit-service: PostgresError.connectionFailed"), "\(accepted.output)")

        let refused = try await run(token: closedToken)
        #expect(refused.status == 1)
        #expect(
            refused.output.contains(
                "RESCIND_AUDIT_OPERATOR_TOKEN_FILE \(closedToken) is not readable by this process (uid 10001, gid 10001) (owner uid 0, group gid 0, mode 0400)"),
            "\(refused.output)")
    }
}
