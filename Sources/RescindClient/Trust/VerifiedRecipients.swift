import Foundation
import RescindCrypto
import RescindProtocol

/// What a recipient is about to be given.
public enum RecipientUse: Sendable, Equatable {
    /// A copy of a new FMK version, to someone who holds the version before and keeps access
    /// (a revocation's remaining holders, a rotation's holders).
    case keepsAccess
    /// The current FMK, to someone who may not hold it (a grant, a re-grant, an invitation).
    case grant
    /// Ownership: the recipient's identity key will sign the family member's history.
    case ownership
}

/// The one rule for every public key this client wraps an FMK to, or hands ownership to.
///
/// The grant service serves everyone's public keys, and a compromised one would serve its own:
/// whatever the client wraps to that key, the service can open. So a key is used only when this
/// client verified it itself, in one of three ways:
/// - (a) it is the key the verified key history's head names for that user: the owner signed
///   its fingerprint when the user was last given a copy;
/// - (b) it is reached from this client's pin of the user through identity-rotation statements
///   each signed by the key before it (`IdentityPins.Pin.follows`). A thief holding the old key
///   can sign such a statement too, so such a key keeps a copy of what its user already held
///   (`keepsAccess`) and is given nothing new until the codes were compared;
/// - (c) it is pinned after the owner compared verification codes with its user, or from an
///   invitation handed over in person.
/// And one concession to a first meeting: a grant to someone this client never pinned and whom
/// the history does not name pins them (trust on first use) and prints the code to compare.
///
/// Anything else is refused before a byte is wrapped, reported as `unverified_recipient_key`,
/// and nothing is committed.
///
/// The granter key a granted copy was wrapped from needs no rule of its own: a copy opens only
/// with the granter's true key (the wrapping is authenticated under the X25519 secret), and what
/// it opens to is checked against the owner's commitment. Re-wrapping that FMK version to the
/// same key after my identity rotation gives its holder nothing it did not already hold.
extension UserSession {
    /// The keys to use for `userID`, verified by the rule above against `verified` (the family
    /// member's history as this client verified it, just before).
    /// - Parameter offered: the keys the service offered (fetched when nil).
    /// - Parameter pins: the pins to check and extend (this session's by default).
    /// - Throws: `KeyHistoryError` `.unverifiedRecipientKey`, after reporting it.
    public func verifiedRecipient(
        _ userID: UUID, offered: UserResponse? = nil, in verified: KeyHistoryStore.Entry, for use: RecipientUse,
        pins: IdentityPins? = nil
    ) async throws -> UserResponse {
        let pins = pins ?? self.pins
        let offered = if let offered { offered } else { try await client.user(userID) }
        let head = verified.head.statement
        let named = head.holder(userID).flatMap { $0.wrapping == .ecdh ? $0.agreementKeyFingerprint : nil }
        let pin = pins[userID]

        func refuse(_ why: String) async -> KeyHistoryError {
            let error = KeyHistoryError(
                .unverifiedRecipientKey, familyMemberID: head.familyMemberID, statementSeq: head.seq,
                MessageLimits.safeText(
                    "user \(userID.uuidString.lowercased()): the grant service offers X25519 key \(Self.short(offeredFingerprint(offered))), "
                        + "this client verified \(Self.short(named ?? pin.map { KeyStatement.fingerprint(ofAgreementKey: $0.agreementPublicKey) })): "
                        + "\(why); nothing was wrapped. Compare codes (`rescind identity code --with \(userID.uuidString.lowercased())` on both sides), "
                        + "then `rescind identity trust \(userID.uuidString.lowercased()) --code C`",
                    maxLength: MessageLimits.errorLength))
            await report(error, offeredVersion: nil, verifiedSeq: verified.seq)
            return error
        }

        guard offered.userID == userID, userID != keys.userID else { throw await refuse("the service answered for another user") }
        let fingerprint = offeredFingerprint(offered)
        let pinMatches = pin?.matches(identity: offered.identityPublicKey, agreement: offered.agreementPublicKey) ?? false
        let compared = pinMatches && (pin?.source == .comparedCode || pin?.source == .invitation)

        switch use {
        case .keepsAccess:
            // (a) the owner signed this key's fingerprint into the history.
            if named == fingerprint { return offered }
            // (c) compared in person, or (b) followed from a pin of the key the history names.
            if compared || (pinMatches && pin?.source == .rotation) { return offered }
            if let pin, KeyStatement.fingerprint(ofAgreementKey: pin.agreementPublicKey) == named,
                pin.follows(to: offered, through: try await client.identityRotations(of: userID))
            {
                try pins.pin(userID, .init(identityPublicKey: offered.identityPublicKey, agreementPublicKey: offered.agreementPublicKey, source: .rotation))
                return offered
            }
            throw await refuse(
                named == nil ? "the owner's history does not name this user as a holder" : "not the key the owner's history names, nor reached from it")
        case .grant, .ownership:
            if compared { return offered }
            if pinMatches, pin?.source == .rotation {
                throw await refuse("their keys changed by a rotation signed with their old key, which a thief can sign too")
            }
            if pinMatches {
                // Pinned at first use: enough while the owner's history names no other key for them.
                guard named == nil || named == fingerprint else { throw await refuse("not the key the owner's history names") }
                return offered
            }
            if let pin {
                if pin.follows(to: offered, through: try await client.identityRotations(of: userID)) {
                    try pins.pin(userID, .init(identityPublicKey: offered.identityPublicKey, agreementPublicKey: offered.agreementPublicKey, source: .rotation))
                    throw await refuse("their keys changed by a rotation signed with their old key, which a thief can sign too")
                }
                throw await refuse("not the keys pinned (\(pin.source.rawValue), \(Timestamp.format(pin.pinnedAt)))")
            }
            // Never pinned: (a) a holder the owner named, or a first meeting (trust on first use).
            // Ownership is never handed to a first meeting: its identity key would sign the history.
            guard use == .grant else { throw await refuse("ownership goes only to keys this client pinned") }
            guard named == nil || named == fingerprint else { throw await refuse("not the key the owner's history names") }
            try pins.pin(userID, .init(identityPublicKey: offered.identityPublicKey, agreementPublicKey: offered.agreementPublicKey, source: .firstUse))
            return offered
        }
    }

    private func offeredFingerprint(_ user: UserResponse) -> Data { KeyStatement.fingerprint(ofAgreementKey: user.agreementPublicKey) }

    /// The first 8 bytes of a fingerprint in hex, for messages.
    static func short(_ fingerprint: Data?) -> String {
        guard let fingerprint else { return "none" }
        return fingerprint.prefix(8).map { String(format: "%02x", $0) }.joined()
    }
}
