import Foundation
import RescindCrypto
import RescindProtocol

/// Invitations (sharing ADR), the client's side. The owner creates one and hands the token
/// over in person (printed, or as a QR code); the invitee accepts it, which pins the
/// inviter's identity key from the token itself; the owner completes it, which pins the
/// invitee's keys from the acceptance signed with the token's one-time key, and shares the
/// family member the invitation named. Both sides end with the same verification code.
///
/// What a compromised grant service cannot do here: substitute the inviter (the token
/// carries the fingerprint of the inviter's identity key), accept on someone's behalf or
/// substitute the invitee's keys (the acceptance must be signed with the token's key, which
/// the service never sees), or forge the invitation (the inviter checks its own signature).
/// It can still refuse to store or serve either side (denial of service).
extension UserSession {
    /// Creates and registers a signed invitation, valid for `lifetime` (at most seven days).
    /// - Returns: the token to hand over; it holds the one-time key, so it is shown once and never stored.
    public func createInvitation(
        sharing familyMemberID: UUID? = nil, lifetime: TimeInterval = Invitation.maximumLifetime, now: Date = Date()
    ) async throws -> (token: InvitationToken, invitation: InvitationResponse) {
        precondition(lifetime > 0 && lifetime <= Invitation.maximumLifetime, "an invitation lives at most seven days")
        var seed = SecureRandom.bytes(count: 32)
        let tokenSeed = seed
        let invitationKey = try Ed25519.PrivateKey(seed: &seed)
        let created = Date(timeIntervalSince1970: (now.timeIntervalSince1970 * 1000).rounded(.down) / 1000)
        let invitation = Invitation(
            invitationID: UUID(), inviterUserID: keys.userID,
            inviterIdentityPublicKey: Data(keys.identityKey.publicKey.rawRepresentation),
            inviterAgreementPublicKey: Data(keys.agreementKey.publicKey.rawRepresentation),
            familyMemberID: familyMemberID, invitationPublicKey: Data(invitationKey.publicKey.rawRepresentation),
            createdAt: created, expiresAt: created.addingTimeInterval(lifetime))
        let signed = SignedInvitation(
            invitation: invitation, signature: Data(keys.identityKey.signature(for: try invitation.signingInput())))
        let response = try await client.createInvitation(signed)
        let token = InvitationToken(
            invitationID: invitation.invitationID, seed: tokenSeed,
            inviterFingerprint: Self.fingerprint(keys.identityKey.publicKey.rawRepresentation))
        return (token, response)
    }

    /// Accepts an invitation handed over in person: checks that the service's copy was signed
    /// by the inviter the token names and that the token's key is the invitation's, pins the
    /// inviter and registers the acceptance.
    ///
    /// Crash-safe and rerunnable: the inviter is pinned *before* the acceptance is sent (the
    /// keys come from the token, so the pin is right even if the acceptance then fails), and an
    /// acceptance the service already holds that is this user's own — signed by this identity
    /// key and the token's key, as a run that died before finishing left it — counts as done
    /// instead of a 409 `invitation_used`.
    /// - Returns: the invitation, and the verification code to compare with the inviter's.
    public func acceptInvitation(
        _ token: InvitationToken, pins: IdentityPins, now: Date = Date()
    ) async throws -> (invitation: Invitation, verificationCode: String) {
        let response = try await client.invitation(token.invitationID)
        let signed = response.invitation
        let invitation = signed.invitation
        guard invitation.invitationID == token.invitationID,
            Self.fingerprint([UInt8](invitation.inviterIdentityPublicKey)) == token.inviterFingerprint
        else {
            throw InvitationError(
                "the grant service's copy of the invitation names another inviter than the token: refused (the service may be compromised)")
        }
        let inviterKey = try Ed25519.PublicKey(rawRepresentation: [UInt8](invitation.inviterIdentityPublicKey))
        guard inviterKey.isValidSignature([UInt8](signed.signature), for: try invitation.signingInput()) else {
            throw InvitationError("the invitation is not signed by the inviter the token names: refused")
        }
        var seed = token.seed
        let invitationKey = try Ed25519.PrivateKey(seed: &seed)
        guard Data(invitationKey.publicKey.rawRepresentation) == invitation.invitationPublicKey else {
            throw InvitationError("the token's key is not this invitation's: refused")
        }
        guard invitation.inviterUserID != keys.userID else { throw InvitationError("this is your own invitation") }
        // Accepted by an earlier run of mine that died before it finished: done, even if expired since.
        let acceptedBefore = isOwnAcceptance(response.acceptance, of: invitation)
        guard acceptedBefore || invitation.expiresAt > now else {
            throw InvitationError("the invitation expired at \(Timestamp.format(invitation.expiresAt))")
        }
        try pins.pin(
            invitation.inviterUserID,
            .init(
                identityPublicKey: invitation.inviterIdentityPublicKey,
                agreementPublicKey: invitation.inviterAgreementPublicKey, source: .invitation, pinnedAt: now))
        let code = try keys.agreementKey.verificationCode(
            with: try X25519.PublicKey(rawRepresentation: [UInt8](invitation.inviterAgreementPublicKey)))
        if acceptedBefore { return (invitation, code) }
        let acceptance = InvitationAcceptance(
            invitationID: invitation.invitationID, inviteeUserID: keys.userID,
            inviteeIdentityPublicKey: Data(keys.identityKey.publicKey.rawRepresentation),
            inviteeAgreementPublicKey: Data(keys.agreementKey.publicKey.rawRepresentation),
            acceptedAt: Date(timeIntervalSince1970: (now.timeIntervalSince1970 * 1000).rounded(.down) / 1000))
        let input = try acceptance.signingInput()
        do {
            _ = try await client.acceptInvitation(
                invitation.invitationID,
                SignedInvitationAcceptance(
                    acceptance: acceptance, identitySignature: Data(keys.identityKey.signature(for: input)),
                    invitationKeySignature: Data(invitationKey.signature(for: input))))
        } catch let error as GrantServiceError where error.status == 409 && error.code == "invitation_used" {
            // Another run of mine may have got there first (two at once): mine is as good as this one.
            guard isOwnAcceptance(try await client.invitation(invitation.invitationID).acceptance, of: invitation) else { throw error }
        }
        return (invitation, code)
    }

    /// Whether `signed` is this user's own acceptance of `invitation`: it names this user and
    /// current identity key and carries valid signatures by that key and by the invitation's
    /// one-time key. The service cannot forge one, so it is safe to take as done.
    func isOwnAcceptance(_ signed: SignedInvitationAcceptance?, of invitation: Invitation) -> Bool {
        guard let signed, let input = try? signed.acceptance.signingInput(),
            let invitationKey = try? Ed25519.PublicKey(rawRepresentation: [UInt8](invitation.invitationPublicKey))
        else { return false }
        let acceptance = signed.acceptance
        let identityKey = keys.identityKey.publicKey
        return acceptance.invitationID == invitation.invitationID && acceptance.inviteeUserID == keys.userID
            && acceptance.inviteeIdentityPublicKey == Data(identityKey.rawRepresentation)
            && acceptance.inviteeAgreementPublicKey == Data(keys.agreementKey.publicKey.rawRepresentation)
            && identityKey.isValidSignature([UInt8](signed.identitySignature), for: input)
            && invitationKey.isValidSignature([UInt8](signed.invitationKeySignature), for: input)
    }

    /// Completes one of my invitations once it was accepted: checks that the invitation is the
    /// one I signed and that the acceptance was signed with its one-time key and by the
    /// invitee's registered identity key, pins the invitee, and shares the family member the
    /// invitation named (wrapped to the pinned key).
    /// - Returns: the invitee, whether a family member was shared, and the verification code.
    public func completeInvitation(
        _ invitationID: UUID, pins: IdentityPins, now: Date = Date()
    ) async throws -> (invitee: UserResponse, shared: UUID?, verificationCode: String) {
        let response = try await client.invitation(invitationID)
        let invitation = response.invitation.invitation
        guard invitation.inviterUserID == keys.userID,
            invitation.inviterIdentityPublicKey == Data(keys.identityKey.publicKey.rawRepresentation),
            keys.identityKey.publicKey.isValidSignature([UInt8](response.invitation.signature), for: try invitation.signingInput())
        else {
            throw InvitationError("this invitation was not signed by your identity key: refused (the service may be compromised)")
        }
        guard let signed = response.acceptance else {
            throw InvitationError(
                response.status == .expired
                    ? "the invitation expired at \(Timestamp.format(invitation.expiresAt)) without being accepted"
                    : "the invitation has not been accepted yet")
        }
        let acceptance = signed.acceptance
        let input = try acceptance.signingInput()
        let invitationKey = try Ed25519.PublicKey(rawRepresentation: [UInt8](invitation.invitationPublicKey))
        guard acceptance.invitationID == invitationID,
            invitationKey.isValidSignature([UInt8](signed.invitationKeySignature), for: input)
        else {
            throw InvitationError(
                "the acceptance was not signed with the invitation's one-time key: refused (someone without the token answered)")
        }
        let inviteeIdentity = try Ed25519.PublicKey(rawRepresentation: [UInt8](acceptance.inviteeIdentityPublicKey))
        guard inviteeIdentity.isValidSignature([UInt8](signed.identitySignature), for: input) else {
            throw InvitationError("the acceptance is not signed by the invitee's identity key: refused")
        }
        // The acceptance is signed with the token's key: these are the invitee's keys, whatever the
        // service shows. The share below wraps to them only (`verifiedRecipient`).
        try pins.pin(
            acceptance.inviteeUserID,
            .init(
                identityPublicKey: acceptance.inviteeIdentityPublicKey,
                agreementPublicKey: acceptance.inviteeAgreementPublicKey, source: .invitation, pinnedAt: now))
        let registered = try await client.user(acceptance.inviteeUserID)
        if let familyMemberID = invitation.familyMemberID {
            _ = try await grant(familyMemberID, to: acceptance.inviteeUserID, pins: pins)
        } else {
            guard registered.identityPublicKey == acceptance.inviteeIdentityPublicKey,
                registered.agreementPublicKey == acceptance.inviteeAgreementPublicKey
            else {
                throw InvitationError(
                    "the grant service shows other keys for the invitee than the ones they accepted with (compare codes with them)")
            }
        }
        let code = try keys.agreementKey.verificationCode(
            with: try X25519.PublicKey(rawRepresentation: [UInt8](acceptance.inviteeAgreementPublicKey)))
        return (registered, invitation.familyMemberID, code)
    }

    /// The first 16 bytes of SHA-256 of an identity key: what a token carries.
    static func fingerprint(_ identityKey: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(identityKey).prefix(InvitationToken.fingerprintByteCount))
    }
}

/// An invitation refused on the client: what was wrong, for the person reading it.
public struct InvitationError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
