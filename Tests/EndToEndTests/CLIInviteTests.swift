import Foundation
import RescindCrypto
import Testing

extension CLITests {
    /// Invitations and pinned identities from the command line.
    @Suite("rescind invite and pinned identities") struct Invite {
        @Test(.timeLimit(.minutes(3)))
        func anInvitationHandedOverPinsBothSidesSharesAndBothSeeOneCode() async throws {
            try await CLITestBed.with { bed in
                let adultA = try await bed.person("Adult A")
                let adultC = try await bed.person("Adult C")
                let adultB = try await bed.person("Adult B")
                let emma = try await adultA.ok(["family-member", "create"]).trimmed
                try await adultA.ok(["record", "add", emma, "--text", "penicillin allergy"])

                let created = try await adultA.ok(["invite", "create", emma, "--days", "2"])
                let token = try #require(created.split(separator: "\n").first { $0.hasPrefix("rescind-invite:") }.map(String.init), "\(created)")
                let id = try #require(created.firstMatch(of: /invitation ([0-9a-f-]{36}) to share/).map { String($0.1) }, "\(created)")
                // The QR code is drawn with half blocks under the token.
                #expect(created.split(separator: "\n").filter { $0.contains("▀") || $0.contains("▄") }.count > 10, "\(created)")

                try await adultA.run(["invite", "complete", id]).expectOneLineError("not been accepted yet")
                let accepted = try await adultC.ok(["invite", "accept", token])
                let inviteeCode = try #require(accepted.firstMatch(of: /verification code ([0-9A-F-]{8})/).map { String($0.1) }, "\(accepted)")
                // Once only: B cannot use the same token.
                try await adultB.run(["invite", "accept", token]).expectOneLineError("409", "invitation_used")
                try await adultB.run(["invite", "accept", "rescind-invite:not-a-token"]).expectOneLineError("not an invitation")

                let completed = try await adultA.ok(["invite", "complete", id])
                #expect(completed.contains("Adult C") && completed.contains("shared \(emma)"), "\(completed)")
                #expect(completed.contains("verification code \(inviteeCode)"), "\(completed) vs \(inviteeCode)")
                #expect(try await adultC.ok(["record", "show", emma, "--all"]).contains("penicillin allergy"))
                // `identity code` gives the same code on both sides.
                #expect(try await adultA.ok(["identity", "code", "--with", adultC.userID]).contains(inviteeCode))
                #expect(try await adultC.ok(["identity", "code", "--with", adultA.userID]).contains(inviteeCode))
            }
        }

        /// Adversary: a crash. `rescind invite accept` died after the grant service stored the
        /// acceptance and before `identity-pins.json` was written; the rerun must not end in 409
        /// `invitation_used` with the inviter never pinned. Played with the state such a crash leaves
        /// on disk: the acceptance stored (by a first run) and no pin file.
        @Test(.timeLimit(.minutes(3)))
        func aRerunAfterACrashBeforeThePinFilePinsTheInviterWithTheSameCode() async throws {
            try await CLITestBed.with { bed in
                let adultA = try await bed.person("Adult A")
                let adultC = try await bed.person("Adult C")
                let created = try await adultA.ok(["invite", "create", "--days", "1", "--no-qr"])
                let token = try #require(created.split(separator: "\n").first { $0.hasPrefix("rescind-invite:") }.map(String.init), "\(created)")
                let id = try #require(created.firstMatch(of: /invitation ([0-9a-f-]{36})/).map { String($0.1) }, "\(created)")
                let first = try await adultC.ok(["invite", "accept", token])
                let code = try #require(first.firstMatch(of: /verification code ([0-9A-F-]{8})/).map { String($0.1) }, "\(first)")
                let pinsFile = adultC.directory.appendingPathComponent("identity-pins.json")
                try FileManager.default.removeItem(at: pinsFile)

                let rerun = try await adultC.run(["invite", "accept", token])
                #expect(rerun.status == 0 && rerun.stdout.contains("verification code \(code)"), "\(rerun)")
                let pins = try String(decoding: Data(contentsOf: pinsFile), as: UTF8.self).lowercased()
                #expect(pins.contains(adultA.userID) && pins.contains("\"invitation\""), "\(pins)")
                #expect(try await adultA.ok(["invite", "complete", id]).contains("verification code \(code)"))
            }
        }

        /// A compromised grant service swaps a user's keys in its database: the granter who pinned
        /// them refuses to grant and reports it, and a code that was not compared does not pin the
        /// swapped keys. A rotation signed by the pinned key alone is what a thief holding that key
        /// makes too: a grant to the rotated keys waits until the codes were compared.
        @Test(.timeLimit(.minutes(3)))
        func swappedKeysAreRefusedAndARotationNeedsTheCodes() async throws {
            try await CLITestBed.with(audit: true) { bed in
                let adultA = try await bed.person("Adult A")
                let adultB = try await bed.person("Adult B")
                let emma = try await adultA.ok(["family-member", "create"]).trimmed
                let liam = try await adultA.ok(["family-member", "create"]).trimmed
                try await adultA.ok(["grant", emma, "--to", adultB.userID])  // pins B on first use
                let code = { (printed: String) in printed.firstMatch(of: /code ([0-9A-F-]{8})/).map { String($0.1) } }

                // B rotates: signed by the pinned key, but so would a thief's be. Refused until compared.
                try await adultB.ok(["identity", "rotate", "--words-file", try #require(adultB.recoveryWords).path])
                try await adultA.run(["grant", liam, "--to", adultB.userID]).expectOneLineError("unverified_recipient_key", "rotation")
                let aSees = try #require(code(try await adultA.ok(["identity", "code", "--with", adultB.userID])))
                let bSees = try #require(code(try await adultB.ok(["identity", "code", "--with", adultA.userID])))
                #expect(aSees == bSees)
                try await adultA.ok(["identity", "trust", adultB.userID, "--code", bSees])
                try await adultA.ok(["grant", liam, "--to", adultB.userID])

                // The service swaps B's keys for an attacker's, with no statement.
                let attackerIdentity = Ed25519.PrivateKey(), attackerAgreement = X25519.PrivateKey()
                try await bed.grant.withConnection { connection in
                    try await connection.execute(
                        """
                        UPDATE users SET identity_public_key = \(Data(attackerIdentity.publicKey.rawRepresentation)),
                                         agreement_public_key = \(Data(attackerAgreement.publicKey.rawRepresentation))
                        WHERE user_id = \(UUID(uuidString: adultB.userID)!)
                        """)
                }
                let noah = try await adultA.ok(["family-member", "create"]).trimmed
                try await adultA.run(["grant", noah, "--to", adultB.userID]).expectOneLineError("unverified_recipient_key", "nothing was wrapped")
                let granted = try await bed.grant.withConnection { connection in
                    try await connection.query(
                        "SELECT count(*) FROM access_grants WHERE family_member_id = \(UUID(uuidString: noah)!) AND grantee_user_id = \(UUID(uuidString: adultB.userID)!)"
                    ).first!.decode(Int.self, column: 0)
                }
                #expect(granted == 0)
                // B's own device shows the code with A's real keys; A's side computes it with the swapped ones: they differ.
                let bCode = try #require(code(try await adultB.ok(["identity", "code", "--with", adultA.userID])))
                try await adultA.run(["identity", "trust", adultB.userID, "--code", bCode]).expectOneLineError("nothing pinned")
                try await adultA.run(["grant", noah, "--to", adultB.userID]).expectOneLineError("unverified_recipient_key")
            }
        }
    }
}

extension CLITests {
    /// The compromised grant service hands the CLI a wrapped key the owner never issued: the CLI
    /// refuses it in one line, shows nothing, and the audit service holds the report.
    @Suite("rescind refuses a forged key and reports it") struct ForgedKey {
        @Test(.timeLimit(.minutes(3)))
        func aReplacedWrappedKeyIsRefusedAndReported() async throws {
            try await CLITestBed.with(audit: true) { bed in
                let adultA = try await bed.person("Adult A")
                let adultC = try await bed.person("Adult C")
                let emma = try await adultA.ok(["family-member", "create"]).trimmed
                try await adultA.ok(["record", "add", emma, "--text", "penicillin allergy"])
                try await adultA.ok(["grant", emma, "--to", adultC.userID])
                #expect(try await adultC.ok(["record", "show", emma, "--all"]).contains("penicillin allergy"))

                let forged = Data(SecureRandom.bytes(count: 40))
                try await bed.grant.withConnection { connection in
                    try await connection.execute(
                        """
                        UPDATE access_grants SET wrapped_fmk = \(forged)
                        WHERE family_member_id = \(UUID(uuidString: emma)!) AND grantee_user_id = \(UUID(uuidString: adultC.userID)!)
                        """)
                }
                let refused = try await adultC.run(["record", "show", emma, "--all"])
                refused.expectOneLineError("wrapped_key_mismatch")
                #expect(!refused.stdout.contains("penicillin"), "\(refused)")
                let reported = try await bed.audit!.withConnection { connection in
                    try await connection.query(
                        "SELECT count(*) FROM key_chain_violations WHERE family_member_id = \(UUID(uuidString: emma)!)"
                    ).first!.decode(Int.self, column: 0)
                }
                #expect(reported == 1)
            }
        }
    }
}
