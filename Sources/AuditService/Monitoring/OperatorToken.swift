import Foundation
import RescindConfiguration
import RescindCrypto

/// The operator's bearer token for the monitoring API, read once at start from a file that
/// follows `SecretFile`'s rule (a platform's mounted secret: root or this user as owner,
/// nothing for others). Only its SHA-256 is kept; a presented token is hashed and
/// compared in constant time, so neither its bytes nor its length leak through timing.
struct OperatorToken: Sendable {
    /// Shorter tokens are refused at start (32 characters of base64 ≈ 192 bits).
    static let minimumLength = 32
    static let maximumLength = 512

    private let digest: [UInt8]

    /// - Throws: `AuditServiceError.configuration` naming the file and the problem
    ///   (missing, unreadable, open to others, wrong owner, too short, not a header-safe token), never its contents.
    init(file path: String) throws {
        func refuse(_ problem: String) -> AuditServiceError {
            .configuration("RESCIND_AUDIT_OPERATOR_TOKEN_FILE \(path) \(problem)")
        }
        var bytes: [UInt8]
        do {
            bytes = try SecretFile.read(path)
        } catch let error as SecretFileError {
            throw refuse(error.problem.description)
        }
        defer { bytes.wipe() }
        // One trailing newline (as `echo` or an editor writes it) is not part of the token.
        while let last = bytes.last, last == UInt8(ascii: "\n") || last == UInt8(ascii: "\r") { bytes.removeLast() }
        guard bytes.count >= Self.minimumLength else {
            throw refuse("holds fewer than \(Self.minimumLength) characters (rescind-admin keys token FILE makes one)")
        }
        guard bytes.count <= Self.maximumLength, bytes.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw refuse("must hold one token of printable ASCII without spaces, at most \(Self.maximumLength) characters")
        }
        digest = SHA256.hash(bytes)
    }

    /// Whether `presented` is the operator token, in time independent of where they differ.
    func matches(_ presented: String) -> Bool {
        let other = SHA256.hash(Array(presented.utf8))
        var difference: UInt8 = 0
        for index in 0..<digest.count { difference |= digest[index] ^ other[index] }
        return difference == 0
    }
}
