import Foundation
import RescindClient
import RescindCrypto
import RescindPostgres
import RescindProtocol
import RescindTestSupport
import Synchronization
import Testing

@testable import DeviceAgent

/// The adversary: a compromised grant service — anyone with write access to its
/// PostgreSQL schema — but no user's private key. Each test changes the schema directly (the
/// service code is unchanged) and asserts that the honest client (a `UserSession`, the CLI's
/// code) and the honest agent refuse the key, keep what they held, and report the right code.
@Suite("A malicious grant service is refused", .serialized)
struct MaliciousServerTests {
    struct Setting {
        let service: GrantServiceHarness
        let owner: UserSession
        let holder: UserSession
        let member: (id: UUID, rawFMK: [UInt8], records: [UUID: [UInt8]])
        let device: AgentTestKit.Device
        let agent: DeviceAgent
        let agentReports: CollectingReporter
        let clientReports: CollectingReporter
        /// The holder acting through the CLI's code, reporting to `clientReports`.
        let client: UserSession

        func sql(_ text: String) async throws {
            try await service.withConnection { _ = try await $0.execute(PostgresQuery(unsafeSQL: text)) }
        }

        /// Moves the family member, every record and active grant to `version` without any
        /// statement (what only the database, not the owner, does), B's copy wrapped by the attacker.
        func forgeVersion(_ version: Int, attackerFMK: SecretKey = SecretKey()) async throws {
            let attacker = X25519.PrivateKey()
            let wrapped = try FMKWrapping.wrap(
                attackerFMK, familyMemberID: member.id, version: UInt32(version), granter: attacker,
                grantee: holder.keys.agreementKey.publicKey)
            let id = member.id.uuidString.lowercased(), user = holder.keys.userID.uuidString.lowercased()
            try await service.withConnection { connection in
                try await connection.transaction { connection in
                    try await connection.execute(PostgresQuery(unsafeSQL: "UPDATE records SET fmk_version = \(version) WHERE family_member_id = '\(id)'"))
                    try await connection.execute(PostgresQuery(unsafeSQL:
                        "UPDATE access_grants SET fmk_version = \(version) WHERE family_member_id = '\(id)' AND revoked_at IS NULL"))
                    try await connection.execute(
                        """
                        UPDATE access_grants SET wrapped_fmk = \(Data(wrapped)),
                            granter_agreement_public_key = \(Data(attacker.publicKey.rawRepresentation))
                        WHERE family_member_id = \(member.id) AND grantee_user_id = \(holder.keys.userID) AND revoked_at IS NULL
                        """)
                    try await connection.execute(PostgresQuery(unsafeSQL:
                        "UPDATE family_members SET current_fmk_version = \(version) WHERE family_member_id = '\(id)'"))
                }
            }
            _ = user
        }

        /// The agent still holds v`version` and every record it had.
        func expectAgentKept(version: Int, sourceLocation: SourceLocation = #_sourceLocation) async throws {
            let status = try await agent.status()
            #expect(status.familyMembers.map(\.fmkVersion) == [version], sourceLocation: sourceLocation)
            #expect(status.familyMembers.map(\.status) == ["active"], sourceLocation: sourceLocation)
            #expect(try await agent.plaintexts(of: member.id) == member.records, sourceLocation: sourceLocation)
        }
    }

    static func with(_ body: (Setting) async throws -> Void) async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await service.user("Adult A")
            let holder = try await service.user("Adult B")
            let member = try await AgentTestKit.familyMember(ownedBy: owner, records: ["allergy: penicillin", "blood type O+"])
            try await owner.grant(member.id, to: holder.keys.userID)
            let device = try await AgentTestKit.enrol(holder, on: service, name: "honest-agent")
            defer { device.directory.remove() }
            let agentReports = CollectingReporter(), clientReports = CollectingReporter()
            let agent = try await device.open(reporter: agentReports)
            try await agent.selfHeal()
            let client = holder.reporting(to: clientReports)
            _ = try await client.currentFMK(member.id)
            try await body(
                Setting(
                    service: service, owner: owner, holder: holder, member: member, device: device, agent: agent,
                    agentReports: agentReports, clientReports: clientReports, client: client))
        }
    }

    @Test("a wrapped key replaced by one for a key the attacker knows, at a version the owner never made")
    func replacedWrappedKey() async throws {
        try await Self.with { s in
            try await s.forgeVersion(2)
            // The client has verified v1: a v2 key with no statement is stale against the owner's history.
            await expectKeyHistoryRefused(.staleVersion) { _ = try await s.client.currentFMK(s.member.id) }
            #expect(s.clientReports.codes == [.staleVersion])
            try await s.agent.selfHeal()
            #expect(s.agentReports.codes == [.staleVersion])
            try await s.expectAgentKept(version: 1)
        }
    }

    @Test("a wrapped key replaced at the current version by one the owner's statement does not name")
    func replacedWrappedKeyAtTheCurrentVersion() async throws {
        try await Self.with { s in
            // A real revocation of nobody else moves everyone to v2 (the agent has not seen it).
            let c = try await s.service.user("Adult C")
            try await s.owner.grant(s.member.id, to: c.keys.userID)
            _ = try await s.owner.revoke(s.member.id, user: c.keys.userID)
            try await s.forgeVersion(2)  // same version, B's copy replaced
            await expectKeyHistoryRefused(.wrappedKeyMismatch) { _ = try await s.client.currentFMK(s.member.id) }
            try await s.agent.selfHeal()
            #expect(s.agentReports.codes == [.wrappedKeyMismatch])
            try await s.expectAgentKept(version: 1)
        }
    }

    @Test("a version skipped: the statement of v2 withheld, v3 served")
    func skippedVersion() async throws {
        try await Self.with { s in
            let c = try await s.service.user("Adult C"), d = try await s.service.user("Adult D")
            try await s.owner.grant(s.member.id, to: c.keys.userID)
            try await s.owner.grant(s.member.id, to: d.keys.userID)
            _ = try await s.owner.revoke(s.member.id, user: c.keys.userID)
            _ = try await s.owner.revoke(s.member.id, user: d.keys.userID)
            try await s.sql(
                "DELETE FROM key_statements WHERE family_member_id = '\(s.member.id.uuidString.lowercased())' AND kind = 'revoke' AND fmk_version = 2")
            await expectKeyHistoryRefused(.versionGap) { _ = try await s.client.currentFMK(s.member.id) }
            try await s.agent.selfHeal()
            #expect(s.agentReports.codes == [.versionGap])
            try await s.expectAgentKept(version: 1)
        }
    }

    @Test("an old version served as current to a client that verified the new one")
    func oldVersionAsCurrent() async throws {
        try await Self.with { s in
            let old = try await s.holder.client.wrappedKey(s.member.id)
            let c = try await s.service.user("Adult C")
            try await s.owner.grant(s.member.id, to: c.keys.userID)
            _ = try await s.owner.revoke(s.member.id, user: c.keys.userID)
            _ = try await s.client.currentFMK(s.member.id)  // verified v2
            try await s.agent.selfHeal()
            #expect(try await s.agent.status().familyMembers.map(\.fmkVersion) == [2])
            let id = s.member.id.uuidString.lowercased()
            try await s.service.withConnection { connection in
                try await connection.transaction { connection in
                    try await connection.execute(PostgresQuery(unsafeSQL: "UPDATE records SET fmk_version = 1 WHERE family_member_id = '\(id)'"))
                    try await connection.execute(PostgresQuery(unsafeSQL:
                        "UPDATE access_grants SET fmk_version = 1 WHERE family_member_id = '\(id)' AND revoked_at IS NULL"))
                    try await connection.execute(
                        """
                        UPDATE access_grants SET wrapped_fmk = \(old.wrappedFMK)
                        WHERE family_member_id = \(s.member.id) AND grantee_user_id = \(s.holder.keys.userID) AND revoked_at IS NULL
                        """)
                    try await connection.execute(PostgresQuery(unsafeSQL: "UPDATE family_members SET current_fmk_version = 1 WHERE family_member_id = '\(id)'"))
                }
            }
            await expectKeyHistoryRefused(.staleVersion) { _ = try await s.client.currentFMK(s.member.id) }
            #expect(s.clientReports.codes == [.staleVersion])
            try await s.agent.selfHeal()
            #expect(s.agentReports.codes == [.staleVersion])
            let status = try await s.agent.status()
            #expect(status.familyMembers.map(\.fmkVersion) == [2] && status.familyMembers.map(\.status) == ["active"])
        }
    }

    @Test("a fork: a forged statement, and another chain served to a device that verified the first")
    func fork() async throws {
        try await Self.with { s in
            let c = try await s.service.user("Adult C")
            try await s.owner.grant(s.member.id, to: c.keys.userID)  // statement 3, verified below
            _ = try await s.client.currentFMK(s.member.id)
            let head = try #require(s.client.keyHistory.entry(s.member.id))
            // The attacker rewrites statement 3 (it holds no owner key: signs with its own) and adds a 4th.
            let attacker = Ed25519.PrivateKey()
            var forged = head.head.statement
            forged.holders = forged.holders.filter { $0.userID != c.keys.userID }
            forged.signerIdentityKey = Data(attacker.publicKey.rawRepresentation)
            let forged3 = try SignedKeyStatement(signing: forged, with: attacker)
            var next = forged
            next.seq = 4
            next.previousHash = try forged3.hash()
            let forged4 = try SignedKeyStatement(signing: next, with: attacker)
            let id = s.member.id
            try await s.service.withConnection { connection in
                try await connection.execute("DELETE FROM key_statements WHERE family_member_id = \(id) AND seq >= 3")
                for signed in [forged3, forged4] {
                    try await connection.execute(
                        """
                        INSERT INTO key_statements (family_member_id, seq, fmk_version, kind, body, signature, hash)
                        VALUES (\(id), \(signed.statement.seq), 1, 'grant', \(try CanonicalJSON.encode(signed.statement)),
                                \(signed.signature), \(try signed.hash()))
                        """)
                }
            }
            // The device that verified statement 3 is offered 4, which extends another 3: a fork.
            await expectKeyHistoryRefused(.fork) { _ = try await s.client.currentFMK(s.member.id) }
            // A device that verifies from the start meets the forged signer.
            let fresh = try await s.holder.addDevice(name: "fresh").reporting(to: s.clientReports)
            await expectKeyHistoryRefused(.unknownSigner) { _ = try await fresh.currentFMK(s.member.id) }
            #expect(s.clientReports.codes == [.fork, .unknownSigner])
        }
    }

    @Test("a grant the owner never made, and an owner's identity key swapped in users")
    func grantNeverMadeAndIdentitySwapped() async throws {
        try await Self.with { s in
            let stranger = try await s.service.user("Mallory")
            let strangerReports = CollectingReporter()
            let strangerClient = stranger.reporting(to: strangerReports)
            let attacker = X25519.PrivateKey()
            let raw = s.member.rawFMK  // the attacker does not have this: it wraps a key of its own
            _ = raw
            let wrapped = try FMKWrapping.wrap(
                SecretKey(), familyMemberID: s.member.id, version: 1, granter: attacker, grantee: stranger.keys.agreementKey.publicKey)
            try await s.service.withConnection { connection in
                try await connection.execute(
                    """
                    INSERT INTO access_grants (grant_id, family_member_id, grantee_user_id, granted_by_user_id, wrapping,
                                               granter_agreement_public_key, wrapped_fmk, fmk_version)
                    VALUES (\(UUID()), \(s.member.id), \(stranger.keys.userID), \(s.owner.keys.userID), 'ecdh',
                            \(Data(attacker.publicKey.rawRepresentation)), \(Data(wrapped)), 1)
                    """)
            }
            await expectKeyHistoryRefused(.notAHolder) { _ = try await strangerClient.currentFMK(s.member.id) }
            #expect(strangerReports.codes == [.notAHolder])

            // The owner's identity key replaced by the attacker's: a device that pins now sees it.
            let swapped = Ed25519.PrivateKey()
            try await s.service.withConnection { connection in
                try await connection.execute(
                    "UPDATE users SET identity_public_key = \(Data(swapped.publicKey.rawRepresentation)) WHERE user_id = \(s.owner.keys.userID)")
            }
            let fresh = try await s.holder.addDevice(name: "fresh").reporting(to: s.clientReports)
            await expectKeyHistoryRefused(.identityKeyChanged) { _ = try await fresh.currentFMK(s.member.id) }
            // The pinned client and agent go on with the history they verified.
            _ = try await s.client.currentFMK(s.member.id)
            try await s.agent.selfHeal()
            try await s.expectAgentKept(version: 1)
        }
    }

    @Test("a 403 for a family member the device still holds: kept and reported; a real revocation erases")
    func unsignedErasure() async throws {
        try await Self.with { s in
            let id = s.member.id
            try await s.service.withConnection { connection in
                try await connection.execute(
                    """
                    UPDATE access_grants SET revoked_at = now(), wrapped_fmk = NULL
                    WHERE family_member_id = \(id) AND grantee_user_id = \(s.holder.keys.userID)
                    """)
            }
            try await s.agent.selfHeal()
            #expect(s.agentReports.codes == [.unsignedErasure])
            try await s.expectAgentKept(version: 1)

            // Restored, then revoked for real by the owner: the signed statement excludes B, so it erases.
            try await s.service.withConnection { connection in
                try await connection.execute("DELETE FROM access_grants WHERE family_member_id = \(id) AND grantee_user_id = \(s.holder.keys.userID)")
            }
            try await s.owner.grant(id, to: s.holder.keys.userID)
            _ = try await s.owner.revoke(id, user: s.holder.keys.userID)
            try await s.agent.selfHeal()
            #expect(try await s.agent.status().familyMembers.map(\.status) == ["revoked"])
            #expect(s.agentReports.codes == [.unsignedErasure])
        }
    }
}
