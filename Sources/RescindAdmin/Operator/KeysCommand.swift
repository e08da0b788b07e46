import ArgumentParser
import Foundation
import RescindCrypto

/// Creates and inspects the services' Ed25519 signing key files and the audit service's
/// operator token file.
struct KeysCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Create a service signing key file or operator token file, or print a public key.",
        discussion: """
            A key file holds a 32-byte Ed25519 seed, readable by its owner only (0600).
            Agents pin the grant service's public key; the audit service verifies with it.
            A token file holds the audit service's operator bearer token (0600).

            Examples:
              rescind-admin keys generate deploy/secrets/grant-service.key > deploy/secrets/grant-service.pub
              rescind-admin keys public deploy/secrets/grant-service.key
              rescind-admin keys token deploy/secrets/audit-operator.token
            """,
        subcommands: [Generate.self, Public.self, Token.self])

    struct Token: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a new operator token file for the audit service's monitoring API (refuses to overwrite).",
            discussion: """
                 256 random bits, base64url, mode 0600; the token is not printed. Point
                 RESCIND_AUDIT_OPERATOR_TOKEN_FILE at it and sign in to the monitoring page with it.

                 Example:
                   rescind-admin keys token deploy/secrets/audit-operator.token
                 """)

        @Argument(help: "Path of the new token file.")
        var path: String

        func run() throws {
            try Self.write(to: path)
        }

        static func write(to path: String) throws {
            guard !FileManager.default.fileExists(atPath: path) else { throw CLIError("\(path) exists; not overwriting a token") }
            let token = Data(SecureRandom.bytes(count: 32)).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            let directory = (path as NSString).deletingLastPathComponent
            if !directory.isEmpty {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            }
            guard FileManager.default.createFile(
                atPath: path, contents: Data((token + "\n").utf8), attributes: [.posixPermissions: 0o600])
            else { throw CLIError("cannot write \(path)") }
        }
    }

    struct Generate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a new key file (refuses to overwrite) and print its base64 public key.",
            discussion: "Example:\n  rescind-admin keys generate deploy/secrets/grant-service.key")

        @Argument(help: "Path of the new key file.")
        var path: String

        func run() throws {
            guard !FileManager.default.fileExists(atPath: path) else { throw CLIError("\(path) exists; not overwriting a key") }
            var seed = SecureRandom.bytes(count: Ed25519.seedByteCount)
            let contents = Data(seed)
            let key = try Ed25519.PrivateKey(seed: &seed)
            let directory = (path as NSString).deletingLastPathComponent
            if !directory.isEmpty {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            }
            guard FileManager.default.createFile(atPath: path, contents: contents, attributes: [.posixPermissions: 0o600]) else {
                throw CLIError("cannot write \(path)")
            }
            print(Data(key.publicKey.rawRepresentation).base64EncodedString())
        }
    }

    struct Public: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the base64 public key of a key file.",
            discussion: "Example:\n  rescind-admin keys public deploy/secrets/grant-service.key")

        @Argument(help: "Path of the key file.")
        var path: String

        func run() throws {
            guard let data = FileManager.default.contents(atPath: path), data.count == Ed25519.seedByteCount else {
                throw CLIError("\(path) is not a \(Ed25519.seedByteCount)-byte key file")
            }
            var seed = [UInt8](data)
            print(Data(try Ed25519.PrivateKey(seed: &seed).publicKey.rawRepresentation).base64EncodedString())
        }
    }
}
