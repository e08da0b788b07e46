import Foundation
import RescindClient
import RescindProtocol
import RescindTestSupport
import Testing

/// The statements the owner's client makes and the service serves conform to
/// `schemas/rescind.key_statement.v1.schema.json`, and the validator refuses a broken one.
@Suite struct KeyStatementSchemaTests {
    @Test func servedStatementsConformToTheSchema() async throws {
        try await GrantServiceHarness.with { service in
            let adultA = try await service.user("Adult A"), adultB = try await service.user("Adult B")
            let adultC = try await service.user("Adult C")
            let (emma, _) = try await adultA.createFamilyMember()
            try await adultA.grant(emma, to: adultB.keys.userID)
            try await adultA.grant(emma, to: adultC.keys.userID)
            _ = try await adultA.revoke(emma, user: adultC.keys.userID)
            try await adultA.transferOwnershipAtOnce(emma, to: adultB.keys.userID)
            try await adultB.adoptOwnership(emma)
            let newKeys = UserKeys.generate(userID: adultB.keys.userID)
            try await adultB.rotateIdentityAtOnce(to: newKeys, currentGeneration: 1)
            try await adultB.withKeys(newKeys).rewrapHeldKeys(from: adultB.keys)
            let statements = try await adultB.client.keyStatements(emma, after: 0).statements
            #expect(statements.map(\.statement.kind) == [.create, .grant, .grant, .revoke, .transfer, .adopt, .rekey])
            #expect(statements.last?.rotation?.recoverySignature != nil, "a rekey is served with the rotation the words approved")
            // Each was begun on a device its user's words certified, with its approval.
            #expect(statements[4].deviceApprovals?.count == 1 && statements.last?.rotation?.deviceApprovals?.count == 1)
            let validator = try JSONSchemaValidator.load(KeyStatement.schema)
            for statement in statements {
                let problems = try validator.problems(try CanonicalJSON.encode(statement))
                #expect(problems.isEmpty, "\(statement.statement.kind): \(problems)")
            }
            // C, revoked, still reads the history (the statement that excludes it).
            #expect(try await adultC.client.keyStatements(emma, after: 3).statements.map(\.statement.kind) == [.revoke, .transfer, .adopt, .rekey])
            var object = try JSONSerialization.jsonObject(with: try CanonicalJSON.encode(statements[0])) as! [String: Any]
            var body = object["statement"] as! [String: Any]
            body["kind"] = "forge"
            body.removeValue(forKey: "holders")
            object["statement"] = body
            #expect(try validator.problems(try JSONSerialization.data(withJSONObject: object)).count == 2)
        }
    }
}
