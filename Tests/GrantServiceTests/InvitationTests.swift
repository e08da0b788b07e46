import Foundation
import RescindCrypto
import RescindProtocol
import RescindTestSupport
import Testing

@testable import RescindClient

/// Invitations: handed over in person, accepted once, and neither side
/// trusts the grant service with the other's keys. The compromised service is played by
/// writing to its database directly.
@Suite(.serialized) struct InvitationTests {
    static func pins() throws -> IdentityPins {
        try IdentityPins(
            path: FileManager.default.temporaryDirectory.appendingPathComponent("pins-\(UUID().uuidString).json").path)
    }

    @Test func anAcceptedInvitationPinsBothSidesSharesAndShowsOneCode() async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await service.user("Adult A"), invitee = try await service.user("Adult C")
            let (emma, fmk) = try await owner.createFamilyMember()
            _ = try await owner.putRecord(emma, plaintext: Array("blood type O+".utf8), fmk: fmk, version: 1)
            let ownerPins = try Self.pins(), inviteePins = try Self.pins()

            let (token, created) = try await owner.createInvitation(sharing: emma)
            #expect(created.status == .pending)
            // What travels is only the token: parse it back from its text.
            let handedOver = try InvitationToken(parsing: "  \(token.description)\n")
            #expect(handedOver == token)

            let (invitation, inviteeCode) = try await invitee.acceptInvitation(handedOver, pins: inviteePins)
            #expect(invitation.familyMemberID == emma)
            #expect(inviteePins[owner.keys.userID]?.identityPublicKey == Data(owner.keys.identityKey.publicKey.rawRepresentation))
            #expect(inviteePins[owner.keys.userID]?.source == .invitation)

            let (who, shared, ownerCode) = try await owner.completeInvitation(invitation.invitationID, pins: ownerPins)
            #expect(who.userID == invitee.keys.userID && shared == emma)
            #expect(ownerCode == inviteeCode)
            #expect(ownerPins[invitee.keys.userID]?.agreementPublicKey == Data(invitee.keys.agreementKey.publicKey.rawRepresentation))
            #expect(try await invitee.readRecords(emma).values.map { String(decoding: $0, as: UTF8.self) } == ["blood type O+"])

            // Pins survive on disk, 0600.
            let reloaded = try IdentityPins(path: ownerPins.path!)
            #expect(reloaded[invitee.keys.userID] == ownerPins[invitee.keys.userID])
            let mode = try FileManager.default.attributesOfItem(atPath: ownerPins.path!)[.posixPermissions] as? Int
            #expect(mode == 0o600)
        }
    }

    @Test func anInvitationWorksOnceAndNotForItsInviterNorAfterItExpires() async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await service.user("Adult A"), first = try await service.user("Adult B")
            let second = try await service.user("Adult C")
            let pins = try Self.pins()
            let (token, _) = try await owner.createInvitation()
            _ = try await first.acceptInvitation(token, pins: pins)
            let again = await #expect(throws: GrantServiceError.self) { _ = try await second.acceptInvitation(token, pins: pins) }
            #expect(again?.status == 409 && again?.code == "invitation_used")
            // Someone else holding the id sees no acceptance; the inviter and the invitee do.
            #expect(try await second.client.invitation(token.invitationID).acceptance == nil)
            #expect(try await first.client.invitation(token.invitationID).acceptance?.acceptance.inviteeUserID == first.keys.userID)
            #expect(try await owner.client.invitation(token.invitationID).acceptance?.acceptance.inviteeUserID == first.keys.userID)

            let own = await #expect(throws: InvitationError.self) {
                let (mine, _) = try await owner.createInvitation()
                _ = try await owner.acceptInvitation(mine, pins: pins)
            }
            #expect(own?.description.contains("your own invitation") == true)

            // Expired: the client refuses, and so does the service for a hand-made acceptance.
            let (short, _) = try await owner.createInvitation(lifetime: 1)
            try await Task.sleep(for: .milliseconds(1200))
            let expired = await #expect(throws: InvitationError.self) { _ = try await second.acceptInvitation(short, pins: pins) }
            #expect(expired?.description.contains("expired") == true)
            let refused = await #expect(throws: GrantServiceError.self) {
                _ = try await second.client.acceptInvitation(short.invitationID, try Self.acceptance(of: short, by: second))
            }
            #expect(refused?.status == 422 && refused?.code == "invitation_expired")
            #expect(try await owner.client.invitation(short.invitationID).status == .expired)
        }
    }

    /// Adversary: a crash. The invitee's client died after the service stored its acceptance and
    /// before the pin was written (played by making the acceptance call alone). Rerunning the
    /// acceptance takes the stored acceptance as its own — signed by its identity key and the
    /// token's key — pins the inviter and shows the code the inviter sees, instead of a 409.
    /// Someone else holding the token is still refused; the inviter it names is pinned all the same
    /// (from the token, before the acceptance is sent), which is what makes the crash harmless.
    @Test func aRerunAfterACrashThatLeftTheAcceptanceStoredPinsTheInviter() async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await service.user("Adult A"), invitee = try await service.user("Adult C")
            let other = try await service.user("Adult B")
            let (token, _) = try await owner.createInvitation(lifetime: 2)
            _ = try await invitee.client.acceptInvitation(token.invitationID, try Self.acceptance(of: token, by: invitee))
            let inviteePins = try Self.pins()
            #expect(inviteePins[owner.keys.userID] == nil)

            // Past the expiry as well: an acceptance of one's own is done whenever it is found.
            try await Task.sleep(for: .milliseconds(2100))
            let (invitation, inviteeCode) = try await invitee.acceptInvitation(token, pins: inviteePins)
            let pinned = try #require(try IdentityPins(path: inviteePins.path!)[owner.keys.userID])
            #expect(pinned.identityPublicKey == Data(owner.keys.identityKey.publicKey.rawRepresentation))
            #expect(pinned.agreementPublicKey == Data(owner.keys.agreementKey.publicKey.rawRepresentation))
            #expect(pinned.source == .invitation)
            let ownerPins = try Self.pins()
            let (who, _, ownerCode) = try await owner.completeInvitation(invitation.invitationID, pins: ownerPins)
            #expect(who.userID == invitee.keys.userID && ownerCode == inviteeCode)

            // A fresh invitation, used by the invitee: another user holding its token still gets the 409.
            let (fresh, _) = try await owner.createInvitation()
            let scratch = try Self.pins()
            _ = try await invitee.acceptInvitation(fresh, pins: scratch)
            let otherPins = try Self.pins()
            let used = await #expect(throws: GrantServiceError.self) { _ = try await other.acceptInvitation(fresh, pins: otherPins) }
            #expect(used?.status == 409 && used?.code == "invitation_used")
            #expect(otherPins[owner.keys.userID]?.identityPublicKey == Data(owner.keys.identityKey.publicKey.rawRepresentation))
        }
    }

    /// The service refuses junk and forgeries with a clear error and stores nothing.
    @Test func forgedAndMalformedInvitationsAreRefused() async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await service.user("Adult A"), other = try await service.user("Adult B")
            let (emma, _) = try await other.createFamilyMember()
            func invitation(_ change: (inout Invitation) -> Void = { _ in }, signer: Ed25519.PrivateKey? = nil) throws -> SignedInvitation {
                let now = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 * 1000).rounded(.down) / 1000)
                var body = Invitation(
                    invitationID: UUID(), inviterUserID: owner.keys.userID,
                    inviterIdentityPublicKey: Data(owner.keys.identityKey.publicKey.rawRepresentation),
                    inviterAgreementPublicKey: Data(owner.keys.agreementKey.publicKey.rawRepresentation), familyMemberID: nil,
                    invitationPublicKey: Data(Ed25519.PrivateKey().publicKey.rawRepresentation), createdAt: now,
                    expiresAt: now.addingTimeInterval(3600))
                change(&body)
                return SignedInvitation(
                    invitation: body, signature: Data((signer ?? owner.keys.identityKey).signature(for: try body.signingInput())))
            }
            let cases: [(String, SignedInvitation, Int, String)] = [
                ("signed by another key", try invitation(signer: Ed25519.PrivateKey()), 422, "bad_signature"),
                ("for someone else", try invitation { $0.inviterUserID = other.keys.userID }, 403, "forbidden"),
                ("with a stale key", try invitation { $0.inviterAgreementPublicKey = Data(X25519.PrivateKey().publicKey.rawRepresentation) }, 422, "stale_identity_key"),
                ("living eight days", try invitation { $0.expiresAt = $0.createdAt.addingTimeInterval(8 * 24 * 3600) }, 422, "invalid_lifetime"),
                ("expiring before it starts", try invitation { $0.expiresAt = $0.createdAt }, 422, "invalid_lifetime"),
                ("from last week", try invitation { $0.createdAt -= 7 * 24 * 3600; $0.expiresAt -= 7 * 24 * 3600 }, 422, "stale_statement"),
                ("with a junk one-time key", try invitation { $0.invitationPublicKey = Data(repeating: 0, count: 31) }, 422, "invalid_public_key"),
                ("sharing someone else's family member", try invitation { $0.familyMemberID = emma }, 403, "forbidden"),
                ("sharing an unknown family member", try invitation { $0.familyMemberID = UUID() }, 404, "not_found"),
            ]
            for (what, signed, status, code) in cases {
                let error = await #expect(throws: GrantServiceError.self, "\(what)") { _ = try await owner.client.createInvitation(signed) }
                #expect(error?.status == status && error?.code == code, "\(what): \(String(describing: error))")
            }
            let stored = try await service.withConnection { connection in
                try await connection.query("SELECT count(*) FROM invitations").first!.decode(Int.self, column: 0)
            }
            #expect(stored == 0)

            // Acceptances: without the token's key, with a NUL-laden or wrong id, for an unknown invitation.
            let (token, _) = try await owner.createInvitation()
            var forged = try Self.acceptance(of: token, by: other)
            forged.invitationKeySignature = Data(Ed25519.PrivateKey().signature(for: try forged.acceptance.signingInput()))
            let noToken = await #expect(throws: GrantServiceError.self) { _ = try await other.client.acceptInvitation(token.invitationID, forged) }
            #expect(noToken?.status == 422 && noToken?.code == "bad_signature")
            let wrongURL = await #expect(throws: GrantServiceError.self) {
                _ = try await other.client.acceptInvitation(UUID(), try Self.acceptance(of: token, by: other))
            }
            #expect(wrongURL?.status == 422 && wrongURL?.code == "invitation_mismatch")
            let unknown = await #expect(throws: GrantServiceError.self) { _ = try await other.client.invitation(UUID()) }
            #expect(unknown?.status == 404)
            #expect(try await owner.client.invitation(token.invitationID).status == .pending)

            // Tokens that are not tokens.
            for junk in ["", "rescind-invite:", "rescind-invite:\(String(repeating: "A", count: 85))",
                "rescind-invite:\(String(repeating: "A", count: 85))\u{0}", "rescind-invite:" + String(repeating: "+", count: 86),
                String(repeating: "A", count: 1 << 20), token.description + "A"]
            {
                #expect(throws: InvitationToken.ParseError.malformed) { try InvitationToken(parsing: junk) }
            }
        }
    }

    /// A compromised grant service replaces the inviter in its copy of the invitation (its own
    /// keys, properly signed by them): the invitee refuses, since the token names the inviter.
    @Test func aServiceThatSubstitutesTheInviterIsRefusedByTheInvitee() async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await service.user("Adult A"), invitee = try await service.user("Adult C")
            let attacker = try await service.user("Mallory")
            let pins = try Self.pins()
            let (token, created) = try await owner.createInvitation()
            var body = created.invitation.invitation
            body.inviterUserID = attacker.keys.userID
            body.inviterIdentityPublicKey = Data(attacker.keys.identityKey.publicKey.rawRepresentation)
            body.inviterAgreementPublicKey = Data(attacker.keys.agreementKey.publicKey.rawRepresentation)
            let substituted = try CanonicalJSON.encode(
                SignedInvitation(invitation: body, signature: Data(attacker.keys.identityKey.signature(for: try body.signingInput()))))
            try await service.withConnection { connection in
                try await connection.execute("UPDATE invitations SET invitation = \(substituted) WHERE invitation_id = \(token.invitationID)")
            }
            let refused = await #expect(throws: InvitationError.self) { _ = try await invitee.acceptInvitation(token, pins: pins) }
            #expect(refused?.description.contains("another inviter") == true)
            #expect(pins[attacker.keys.userID] == nil && pins[owner.keys.userID] == nil)
            let accepted = try await service.withConnection { connection in
                try await connection.query("SELECT count(*) FROM invitation_acceptances").first!.decode(Int.self, column: 0)
            }
            #expect(accepted == 0)
        }
    }

    /// A compromised grant service answers the invitation itself with an attacker's keys (it
    /// never saw the token's key): the owner refuses, pins nothing and shares nothing.
    @Test func aServiceThatForgesTheAcceptanceIsRefusedByTheOwner() async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await service.user("Adult A"), attacker = try await service.user("Mallory")
            let (emma, _) = try await owner.createFamilyMember()
            let pins = try Self.pins()
            let (token, _) = try await owner.createInvitation(sharing: emma)
            // The service signs with everything it has: the attacker's identity key, and a key of its own for the token's.
            var forged = try Self.acceptance(of: token, by: attacker)
            forged.invitationKeySignature = Data(Ed25519.PrivateKey().signature(for: try forged.acceptance.signingInput()))
            let body = try CanonicalJSON.encode(forged)
            try await service.withConnection { connection in
                try await connection.execute(
                    """
                    INSERT INTO invitation_acceptances (invitation_id, invitee_user_id, acceptance)
                    VALUES (\(token.invitationID), \(attacker.keys.userID), \(body))
                    """)
            }
            let refused = await #expect(throws: InvitationError.self) {
                _ = try await owner.completeInvitation(token.invitationID, pins: pins)
            }
            #expect(refused?.description.contains("one-time key") == true)
            #expect(pins[attacker.keys.userID] == nil)
            #expect(try await owner.client.grants(emma).allSatisfy { $0.granteeUserID == owner.keys.userID })

            // And an invitation the service made up, signed by someone else: the owner does not recognise it.
            let (other, _) = try await attacker.createInvitation()
            try await service.withConnection { connection in
                try await connection.execute(
                    "UPDATE invitations SET inviter_user_id = \(owner.keys.userID) WHERE invitation_id = \(other.invitationID)")
            }
            let notMine = await #expect(throws: InvitationError.self) { _ = try await owner.completeInvitation(other.invitationID, pins: pins) }
            #expect(notMine?.description.contains("not signed by your identity key") == true)
        }
    }

    /// An acceptance of `token` by `session`, signed properly (with the token's key).
    static func acceptance(of token: InvitationToken, by session: UserSession) throws -> SignedInvitationAcceptance {
        let acceptance = InvitationAcceptance(
            invitationID: token.invitationID, inviteeUserID: session.keys.userID,
            inviteeIdentityPublicKey: Data(session.keys.identityKey.publicKey.rawRepresentation),
            inviteeAgreementPublicKey: Data(session.keys.agreementKey.publicKey.rawRepresentation),
            acceptedAt: Date(timeIntervalSince1970: (Date().timeIntervalSince1970 * 1000).rounded(.down) / 1000))
        var seed = token.seed
        let key = try Ed25519.PrivateKey(seed: &seed)
        let input = try acceptance.signingInput()
        return SignedInvitationAcceptance(
            acceptance: acceptance, identitySignature: Data(session.keys.identityKey.signature(for: input)),
            invitationKeySignature: Data(key.signature(for: input)))
    }
}
