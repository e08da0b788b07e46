import Foundation
import RescindCrypto
import RescindProtocol
import Testing

@testable import GrantService

/// `GrantRules.checkKeyStatement`: the service's defence-in-depth check of an owner's statement
/// against the head and the grants a change leaves, without a database.
@Suite struct GrantRulesKeyStatementTests {
    let ownerKey = Ed25519.PrivateKey()
    let owner = UUID(), grantee = UUID()
    let id = UUID()
    let wrapped = Data(repeating: 7, count: 40)
    let agreement = Data(repeating: 3, count: 32)

    func facts(headSeq: Int = 1, headHash: Data? = Data(repeating: 1, count: 32)) -> KeyStatementFacts {
        KeyStatementFacts(
            familyMemberID: id, kind: .grant, headSeq: headSeq, headHash: headHash, signer: Data(ownerKey.publicKey.rawRepresentation),
            ownerUserID: owner, fmkVersion: 1, holders: [owner, grantee],
            changed: [grantee: (wrapped, KeyStatement.fingerprint(ofAgreementKey: agreement))])
    }

    func statement(_ edit: (inout KeyStatement) -> Void = { _ in }, key: Ed25519.PrivateKey? = nil) throws -> SignedKeyStatement {
        var statement = KeyStatement(
            familyMemberID: id, seq: 2, kind: .grant, fmkVersion: 1, previousHash: Data(repeating: 1, count: 32), ownerUserID: owner,
            signerIdentityKey: Data((key ?? ownerKey).publicKey.rawRepresentation),
            holders: [
                .init(userID: owner, wrapping: .self, agreementKeyFingerprint: Data(count: 32), wrappedFMKHash: Data(count: 32)),
                .init(
                    userID: grantee, wrapping: .ecdh, agreementKeyFingerprint: KeyStatement.fingerprint(ofAgreementKey: agreement),
                    wrappedFMKHash: KeyStatement.wrappedHash(wrapped)),
            ],
            fmkCommitment: Data(count: 32), issuedAt: Date())
        edit(&statement)
        return try SignedKeyStatement(signing: statement, with: key ?? ownerKey)
    }

    func expectCode(_ code: String, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) {
        do {
            try body()
            Issue.record("accepted; expected \(code)", sourceLocation: sourceLocation)
        } catch let violation as RuleViolation {
            #expect(violation.code == code, "\(violation)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("unexpected \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test func theNextWellFormedSignedStatementPassesAndEveryDeviationIsRefused() throws {
        try GrantRules.checkKeyStatement(try statement(), facts())
        expectCode("key_statement_required") { try GrantRules.checkKeyStatement(nil, facts()) }
        expectCode("key_statement_stale") { try GrantRules.checkKeyStatement(try statement(), facts(headSeq: 2)) }
        expectCode("key_statement_stale") {
            try GrantRules.checkKeyStatement(try statement(), facts(headHash: Data(repeating: 9, count: 32)))
        }
        var forged = try statement()
        forged.signature[3] ^= 1
        expectCode("invalid_key_statement") { try GrantRules.checkKeyStatement(forged, facts()) }
        expectCode("invalid_key_statement") { try GrantRules.checkKeyStatement(try statement(key: Ed25519.PrivateKey()), facts()) }
        expectCode("invalid_key_statement") { try GrantRules.checkKeyStatement(try statement { $0.kind = .adopt }, facts()) }
        expectCode("invalid_key_statement") { try GrantRules.checkKeyStatement(try statement { $0.fmkVersion = 2 }, facts()) }
        expectCode("invalid_key_statement") { try GrantRules.checkKeyStatement(try statement { $0.holders.removeLast() }, facts()) }
        expectCode("invalid_key_statement") {
            try GrantRules.checkKeyStatement(try statement { statement in
                statement.holders = statement.holders.map { holder in
                    var holder = holder
                    if holder.userID == grantee { holder.wrappedFMKHash = Data(count: 32) }
                    return holder
                }
            }, facts())
        }
        expectCode("invalid_key_statement") { try GrantRules.checkKeyStatement(try statement { $0.familyMemberID = UUID() }, facts()) }
        expectCode("invalid_key_statement") { try GrantRules.checkKeyStatement(try statement { $0.revokedUserID = UUID() }, facts()) }
        expectCode("invalid_key_statement") { try GrantRules.checkKeyStatement(try statement { $0.fmkCommitment = Data(count: 2) }, facts()) }
    }
}
