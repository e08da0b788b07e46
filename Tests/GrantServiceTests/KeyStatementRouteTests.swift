import Foundation
@testable import RescindClient
import RescindCrypto
import RescindProtocol
import RescindTestSupport
import Testing

/// Hostile key statements at the grant service's API: a grant whose statement has a
/// bad signature, a broken previous-hash, a version gap, an unknown signer, or is malformed or
/// huge is refused with a clear code, and nothing stored changes.
@Suite struct KeyStatementRouteTests {
    @Test func hostileStatementsAreRefusedAndChangeNothing() async throws {
        try await GrantServiceHarness.with { service in
            let adultA = try await service.user("Adult A"), adultB = try await service.user("Adult B")
            let (emma, _) = try await adultA.createFamilyMember()
            let verified = try await adultA.verifiedKey(emma)
            let grantee = try await adultA.client.user(adultB.keys.userID)
            let wrapped = Data(try FMKWrapping.wrap(
                verified.fmk, familyMemberID: emma, version: 1, granter: adultA.keys.agreementKey,
                grantee: try X25519.PublicKey(rawRepresentation: [UInt8](grantee.agreementPublicKey))))
            let holder = KeyStatement.Holder(
                userID: adultB.keys.userID, wrapping: .ecdh,
                agreementKeyFingerprint: KeyStatement.fingerprint(ofAgreementKey: grantee.agreementPublicKey),
                wrappedFMKHash: KeyStatement.wrappedHash(wrapped))
            let holders = verified.entry.head.statement.holders + [holder]
            let good = try adultA.nextStatement(after: verified.entry, kind: .grant, holders: holders)
            func resigned(_ edit: (inout KeyStatement) -> Void, key: Ed25519.PrivateKey? = nil) throws -> SignedKeyStatement {
                var statement = good.statement
                edit(&statement)
                let signer = key ?? adultA.keys.identityKey
                statement.signerIdentityKey = Data(signer.publicKey.rawRepresentation)
                return try SignedKeyStatement(signing: statement, with: signer)
            }
            var badSignature = good
            badSignature.signature[10] ^= 0x40
            let many = (0..<1_001).map { _ in
                KeyStatement.Holder(userID: UUID(), wrapping: .ecdh, agreementKeyFingerprint: Data(count: 32), wrappedFMKHash: Data(count: 32))
            }
            let cases: [(String, SignedKeyStatement?, Int, String)] = [
                ("none", nil, 422, "key_statement_required"),
                ("bad signature", badSignature, 422, "invalid_key_statement"),
                ("broken previous hash", try resigned { $0.previousHash = Data(repeating: 5, count: 32) }, 409, "key_statement_stale"),
                ("sequence gap", try resigned { $0.seq = 5 }, 409, "key_statement_stale"),
                ("version gap", try resigned { $0.fmkVersion = 3 }, 422, "invalid_key_statement"),
                ("unknown signer", try resigned({ _ in }, key: Ed25519.PrivateKey()), 422, "invalid_key_statement"),
                ("a holder too many", try resigned { $0.holders.append(many[0]) }, 422, "invalid_key_statement"),
                ("huge", try resigned { $0.holders += many }, 422, "invalid_key_statement"),
                ("malformed", try resigned { $0.fmkCommitment = Data(count: 5) }, 422, "invalid_key_statement"),
            ]
            let token = try await adultA.token()
            for (name, statement, status, code) in cases {
                let request = GrantRequest(
                    granteeUserID: adultB.keys.userID, fmkVersion: 1, wrappedFMK: wrapped,
                    granteeAgreementPublicKey: grantee.agreementPublicKey, statement: statement)
                let answer = try await service.http.send("POST", "v1/family-members/\(emma)/grants", token: token, json: request)
                #expect(answer.status == status && answer.text.contains(code), "\(name): \(answer.status) \(answer.text)")
            }
            // Nothing stored changed: one grant, one statement.
            #expect(try await adultA.client.grants(emma).count == 1)
            #expect(try await adultA.client.keyStatements(emma, after: 0).statements.count == 1)
            // The honest statement still goes through, and B verifies it.
            _ = try await adultA.client.grant(
                emma,
                GrantRequest(
                    granteeUserID: adultB.keys.userID, fmkVersion: 1, wrappedFMK: wrapped,
                    granteeAgreementPublicKey: grantee.agreementPublicKey, statement: good))
            #expect(try await adultB.currentFMK(emma).fmk == verified.fmk)
        }
    }

    @Test func aVerifiedHistoryIsKeptOnDiskOwnerOnlyAndSurvivesARestart() async throws {
        try await GrantServiceHarness.with { service in
            let adultA = try await service.user("Adult A")
            let (emma, _) = try await adultA.createFamilyMember()
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kh-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let path = directory.appendingPathComponent(KeyHistoryStore.fileName).path
            let store = try KeyHistoryStore(path: path)
            let verified = try await adultA.verify(try await adultA.client.wrappedKey(emma))
            try await store.update(emma, verified.entry)
            let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
            #expect(mode == 0o600)
            #expect(try KeyHistoryStore(path: path).entry(emma) == verified.entry)
            // A corrupt file is an error, never a silent reset (which would allow a rollback).
            try Data("{".utf8).write(to: URL(fileURLWithPath: path))
            chmod(path, 0o600)
            #expect(throws: (any Error).self) { _ = try KeyHistoryStore(path: path) }
        }
    }
}
