import Foundation
import RescindCrypto
import RescindPostgres
import RescindProtocol
import RescindTLS
import RescindTestSupport
import Testing

@testable import RescindClient

/// The adversary: a compromised grant service, with full write access to its database, that
/// answers every request as it likes — but holds no user's private key. It moves first: it
/// offers a key of its own for someone the owner is about to wrap an FMK to (or hand ownership
/// to), and wins if the owner wraps to it. Each test holds the attacker's private key and
/// asserts that it opens no wrapped FMK the service stored, that the owner's client refused with
/// `unverified_recipient_key` before committing anything, and that the refusal was reported.
@Suite("A compromised grant service cannot choose whom the owner wraps to", .serialized)
struct VerifiedRecipientTests {
    /// What the attacker holds: keys of its own, which it puts in place of a user's.
    struct Attacker {
        let identity = Ed25519.PrivateKey()
        let agreement = X25519.PrivateKey()
        var agreementPublicKey: Data { Data(agreement.publicKey.rawRepresentation) }
    }

    struct Setting {
        let service: GrantServiceHarness
        let home: Household
        /// Adult A, reporting what it refuses to `reports`.
        let owner: UserSession
        let reports: CollectingReporter
        let attacker = Attacker()

        /// The service's database now serves the attacker's X25519 key (and, with `identity`, its
        /// Ed25519 key) as `user`'s.
        func swapKeys(of user: UUID, identity: Bool = false) async throws {
            try await service.withConnection { connection in
                try await connection.execute(
                    "UPDATE users SET agreement_public_key = \(attacker.agreementPublicKey) WHERE user_id = \(user)")
                if identity {
                    try await connection.execute(
                        "UPDATE users SET identity_public_key = \(Data(attacker.identity.publicKey.rawRepresentation)) WHERE user_id = \(user)")
                }
            }
        }

        /// Puts `session`'s own keys back.
        func restoreKeys(of session: UserSession) async throws {
            try await service.withConnection { connection in
                try await connection.execute(
                    """
                    UPDATE users SET agreement_public_key = \(Data(session.keys.agreementKey.publicKey.rawRepresentation)),
                        identity_public_key = \(Data(session.keys.identityKey.publicKey.rawRepresentation))
                    WHERE user_id = \(session.keys.userID)
                    """)
            }
        }

        /// How many wrapped FMKs stored for `familyMember`, at any version, the attacker's key opens.
        func copiesTheAttackerOpens(of familyMember: UUID) async throws -> Int {
            let rows = try await service.withConnection { connection in
                try await connection.query(
                    """
                    SELECT wrapped_fmk, granter_agreement_public_key, fmk_version FROM access_grants
                    WHERE family_member_id = \(familyMember) AND wrapping = 'ecdh' AND wrapped_fmk IS NOT NULL
                    """
                ).map { try $0.decode(Data.self, Data.self, Int.self) }
            }
            return rows.filter { wrapped, granter, version in
                guard let granter = try? X25519.PublicKey(rawRepresentation: [UInt8](granter)) else { return false }
                return (try? FMKWrapping.unwrap(
                    [UInt8](wrapped), familyMemberID: familyMember, version: UInt32(version), grantee: attacker.agreement,
                    granter: granter)) != nil
            }.count
        }

        /// The refusal every test expects: named, reported once, nothing committed.
        func expectRefused(
            naming user: UUID, familyMember: UUID, atVersion version: Int, sourceLocation: SourceLocation = #_sourceLocation,
            _ body: () async throws -> Void
        ) async throws {
            do {
                try await body()
                Issue.record("the owner's client went ahead with the attacker's key", sourceLocation: sourceLocation)
            } catch let error as KeyHistoryError {
                #expect(error.code == .unverifiedRecipientKey, "\(error)", sourceLocation: sourceLocation)
                #expect(error.detail.contains(user.uuidString.lowercased()), "\(error)", sourceLocation: sourceLocation)
                #expect(
                    error.detail.contains(UserSession.short(KeyStatement.fingerprint(ofAgreementKey: attacker.agreementPublicKey))),
                    "the message names the key offered: \(error)", sourceLocation: sourceLocation)
            }
            #expect(reports.codes == [.unverifiedRecipientKey], sourceLocation: sourceLocation)
            #expect(try await owner.client.fmkVersion(familyMember).currentFMKVersion == version, sourceLocation: sourceLocation)
            #expect(try await copiesTheAttackerOpens(of: familyMember) == 0, sourceLocation: sourceLocation)
        }
    }

    static func with(records: Int = 3, _ body: (Setting) async throws -> Void) async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: records)
            let reports = CollectingReporter()
            try await body(Setting(service: service, home: home, owner: home.adultA.reporting(to: reports), reports: reports))
        }
    }

    @Test func aRemainingGranteesKeySwappedBeforeTheRevocationIsRefused() async throws {
        try await Self.with { s in
            let (b, c, emma) = (s.home.adultB, s.home.adultC, s.home.emma)
            try await s.swapKeys(of: b.keys.userID)
            try await s.expectRefused(naming: b.keys.userID, familyMember: emma, atVersion: 1) {
                _ = try await s.owner.revoke(emma, user: c.keys.userID)
            }
            // The revocation was abandoned: C still reads, and writes again.
            #expect(try await c.readRecords(emma).count == 3)
            _ = try await c.putRecord(emma, plaintext: Array("written after the refusal".utf8), fmk: s.home.fmk, version: 1)
            // The real key back, the same revocation goes through, wrapped to B's own key.
            try await s.restoreKeys(of: b)
            let committed = try await s.owner.revoke(emma, user: c.keys.userID)
            #expect(committed.newFMKVersion == 2)
            #expect(try await b.readRecords(emma).count == 4)
            #expect(try await s.copiesTheAttackerOpens(of: emma) == 0)
        }
    }

    /// The service answers the commit `stale_identity_key` because it now serves the attacker's key,
    /// and offers that key when the client catches up.
    @Test func aKeySwappedBetweenBeginAndCommitIsRefusedAtTheCatchUp() async throws {
        try await Self.with { s in
            let (b, c, emma) = (s.home.adultB, s.home.adultC, s.home.emma)
            let revocation = try await s.owner.client.beginRevocation(emma, BeginRevocationRequest(revokedUserID: c.keys.userID))
            try await s.expectRefused(naming: b.keys.userID, familyMember: emma, atVersion: 1) {
                _ = try await s.owner.complete(
                    revocation, uploadBatchSize: 500, progress: { _ in }, afterFetchingKey: {},
                    beforeCommit: { catchUps in if catchUps == 0 { try await s.swapKeys(of: b.keys.userID) } })
            }
        }
    }

    /// The service makes up a `stale_identity_key` answer (it never forwards the commit) and then
    /// serves the attacker's key for B: a service answering as it likes, in front of a real one.
    @Test func aForgedStaleIdentityKeyAnswerFollowedByASubstitutedKeyIsRefused() async throws {
        try await Self.with { s in
            let (b, c, emma) = (s.home.adultB, s.home.adultC, s.home.emma)
            let attackerKey = s.attacker.agreementPublicKey.base64EncodedString()
            let lying = Flag()
            let proxy = try await ForwardingProxy.start(forwardingTo: s.service.baseURL) { exchange in
                if exchange.method == "POST", exchange.path.hasSuffix("/commit") {
                    lying.set()
                    return TestHTTP.Answer(
                        status: 409, body: Data(#"{"error":{"code":"stale_identity_key","message":"a grantee rotated their keys"}}"#.utf8),
                        headers: [("Content-Type", "application/json")])
                }
                let answer = try await exchange.forward()
                guard lying.isSet, exchange.method == "GET", exchange.path == "/v1/users/\(b.keys.userID)" else { return answer }
                return try answer.replacing("agreement_public_key", with: attackerKey)
            }
            defer { Task { await proxy.stop() } }
            let throughProxy = try await s.owner.through(proxy.baseURL, reporting: s.reports)
            try await s.expectRefused(naming: b.keys.userID, familyMember: emma, atVersion: 1) {
                _ = try await throughProxy.revoke(emma, user: c.keys.userID)
            }
            await proxy.stop()
        }
    }

    /// A begin answer that adds a user to be handed the new FMK, or leaves a holder out, or names
    /// another user to revoke: the owner's client goes by its verified history, not the answer.
    @Test func aBeginAnswerThatChangesWhoKeepsAccessIsRefused() async throws {
        try await Self.with { s in
            let (b, c, emma) = (s.home.adultB, s.home.adultC, s.home.emma)
            let mallory = try await s.service.user("Mallory")
            let malloryJSON = try JSONSerialization.jsonObject(with: CanonicalJSON.encode(try await s.owner.client.user(mallory.keys.userID)))
            let bID = b.keys.userID.uuidString.lowercased()
            let tamper = Mutable<(inout [String: Any]) -> Void>({ _ in })
            let proxy = try await ForwardingProxy.start(forwardingTo: s.service.baseURL) { exchange in
                let answer = try await exchange.forward()
                guard exchange.method == "POST", exchange.path.hasSuffix("/revocations"), answer.status == 201 else { return answer }
                var begun = try JSONSerialization.jsonObject(with: answer.body) as! [String: Any]
                tamper.value(&begun)
                return TestHTTP.Answer(status: answer.status, body: try JSONSerialization.data(withJSONObject: begun), headers: answer.headers)
            }
            defer { Task { await proxy.stop() } }
            let throughProxy = try await s.owner.through(proxy.baseURL, reporting: s.reports)

            tamper.value = { begun in begun["remaining_grantees"] = (begun["remaining_grantees"] as! [Any]) + [malloryJSON] }
            await #expect(throws: KeyHistoryError.self) { _ = try await throughProxy.revoke(emma, user: c.keys.userID) }
            tamper.value = { begun in
                begun["remaining_grantees"] = (begun["remaining_grantees"] as! [[String: Any]]).filter { ($0["user_id"] as? String)?.lowercased() != bID }
            }
            await #expect(throws: KeyHistoryError.self) { _ = try await throughProxy.revoke(emma, user: c.keys.userID) }
            #expect(s.reports.codes == [.unverifiedRecipientKey, .unverifiedRecipientKey])
            // Asked to revoke C, the service begins a revocation of B: abandoned before anything is done.
            tamper.value = { begun in begun["revoked_user_id"] = b.keys.userID.uuidString }
            let swapped = await #expect(throws: GrantServiceError.self) { _ = try await throughProxy.revoke(emma, user: c.keys.userID) }
            #expect(swapped?.code == "unexpected_response")
            #expect(try await s.owner.client.fmkVersion(emma).currentFMKVersion == 1)
            #expect(try await c.readRecords(emma).count == 3)
            #expect(try await b.readRecords(emma).count == 3)
            await proxy.stop()
        }
    }

    @Test func aSubstitutedKeyAtTheOwnersRotationIsRefused() async throws {
        try await Self.with { s in
            try await s.swapKeys(of: s.home.adultC.keys.userID)
            try await s.expectRefused(naming: s.home.adultC.keys.userID, familyMember: s.home.emma, atVersion: 1) {
                _ = try await s.owner.rotate(s.home.emma)
            }
        }
    }

    @Test func aSubstitutedKeyAtAGrantOrReGrantIsRefused() async throws {
        try await Self.with { s in
            let (c, emma) = (s.home.adultC, s.home.emma)
            _ = try await s.owner.revoke(emma, user: c.keys.userID)
            try await s.swapKeys(of: c.keys.userID)
            try await s.expectRefused(naming: c.keys.userID, familyMember: emma, atVersion: 2) {
                try await s.owner.grant(emma, to: c.keys.userID)
            }
            #expect(try await s.owner.client.grants(emma).filter { $0.revokedAt == nil }.count == 2)
            // A first meeting is still trust on first use: a new user is pinned and granted.
            let dana = try await s.service.user("Dana")
            try await s.owner.grant(emma, to: dana.keys.userID)
            #expect(try await dana.readRecords(emma).count == 3)
            #expect(s.owner.pins[dana.keys.userID]?.source == .firstUse)
        }
    }

    /// Trust is not inherited: a grantee's identity rotation, signed with the old key (which a thief
    /// holding the old key can sign too), lets the new key keep what it held, but a new grant to it
    /// waits until the owner compared codes.
    @Test func aKeyReachedByRotationKeepsAccessButIsGrantedNothingNewUntilCodesAreCompared() async throws {
        try await Self.with { s in
            let (b, c, emma) = (s.home.adultB, s.home.adultC, s.home.emma)
            let rotatedB = try await IdentityRotationTests.rotate(b)
            // A revocation of C re-wraps for B's new key: reached from A's pin of B by B's signed rotation.
            let committed = try await s.owner.revoke(emma, user: c.keys.userID)
            #expect(try await rotatedB.readRecords(emma).count == 3)
            #expect(s.owner.pins[b.keys.userID]?.source == .rotation)
            // A new family member shared with that key: refused until the codes were compared.
            let (liam, _) = try await s.owner.createFamilyMember()
            do {
                try await s.owner.grant(liam, to: b.keys.userID)
                Issue.record("granted to a key reached only through a rotation")
            } catch let error as KeyHistoryError {
                #expect(error.code == .unverifiedRecipientKey)
                #expect(error.detail.contains("rotation"), "\(error)")
            }
            #expect(try await s.owner.client.grants(liam).count == 1)
            // `rescind identity trust B --code C` after comparing: then the grant goes through.
            let served = try await s.owner.client.user(b.keys.userID)
            try s.owner.pins.pin(
                b.keys.userID, .init(identityPublicKey: served.identityPublicKey, agreementPublicKey: served.agreementPublicKey, source: .comparedCode))
            try await s.owner.grant(liam, to: b.keys.userID)
            _ = try await rotatedB.currentFMK(liam)
            #expect(committed.newFMKVersion == 2 && s.reports.codes == [.unverifiedRecipientKey])
        }
    }

    /// The stolen-device flow: the owner compared codes with B's rotated keys; the service swaps
    /// B's key between the first re-grant and the second.
    @Test func aSubstitutedKeyAtTheStolenDeviceReGrantIsRefused() async throws {
        try await Self.with { s in
            let (b, emma) = (s.home.adultB, s.home.emma)
            let (liam, _) = try await s.owner.createFamilyMember()
            try await s.owner.grant(liam, to: b.keys.userID)
            var recovery = try await s.owner.beginStolenDeviceRecovery(user: b.keys.userID, reason: "phone stolen")
            _ = try await s.owner.advance(&recovery, save: { _ in })
            let rotatedB = try await IdentityRotationTests.rotate(b)
            let code = try rotatedB.keys.agreementKey.verificationCode(with: s.owner.keys.agreementKey.publicKey)
            // The service swaps B's key once the first re-grant is saved.
            let swapped = Flag()
            let proxy = try await ForwardingProxy.start(forwardingTo: s.service.baseURL) { exchange in
                let answer = try await exchange.forward()
                guard swapped.isSet, exchange.method == "GET", exchange.path == "/v1/users/\(b.keys.userID)" else { return answer }
                return try answer.replacing("agreement_public_key", with: s.attacker.agreementPublicKey.base64EncodedString())
            }
            defer { Task { await proxy.stop() } }
            let throughProxy = try await s.owner.through(proxy.baseURL, reporting: s.reports)
            do {
                _ = try await throughProxy.advance(&recovery, confirmedCode: code, save: { plan in
                    if plan.regranted.count == 1 { swapped.set() }
                })
                Issue.record("re-granted to the attacker's key")
            } catch let error as KeyHistoryError {
                #expect(error.code == .unverifiedRecipientKey, "\(error)")
            }
            await proxy.stop()
            #expect(swapped.isSet && recovery.regranted.count == 1)
            #expect(s.reports.codes == [.unverifiedRecipientKey])
            for member in [emma, liam] { #expect(try await s.copiesTheAttackerOpens(of: member) == 0) }
            // The first re-grant went to B's own new key.
            let first = try #require(recovery.regranted.first)
            _ = try await rotatedB.currentFMK(first)
        }
    }

    @Test func aSubstitutedKeyAtTransferIsRefused() async throws {
        try await Self.with { s in
            let (b, emma) = (s.home.adultB, s.home.emma)
            try await s.swapKeys(of: b.keys.userID, identity: true)
            try await s.expectRefused(naming: b.keys.userID, familyMember: emma, atVersion: 1) {
                _ = try await s.owner.transferOwnership(emma, to: b.keys.userID)
            }
            #expect(try await s.owner.client.familyMember(emma).ownerUserID == s.owner.keys.userID)
            // Ownership never goes to keys seen first at the transfer, even the right ones.
            try await s.restoreKeys(of: b)
            let fresh = UserSession.sharingDevice(of: s.owner, pins: IdentityPins())
            let unpinned = await #expect(throws: KeyHistoryError.self) { _ = try await fresh.transferOwnership(emma, to: b.keys.userID) }
            #expect(unpinned?.detail.contains("ownership goes only to keys this client pinned") == true, "\(String(describing: unpinned))")
            try await s.owner.transferOwnershipAtOnce(emma, to: b.keys.userID)
            #expect(try await s.owner.client.familyMember(emma).ownerUserID == b.keys.userID)
        }
    }

    @Test func aSubstitutedKeyAtInvitationCompletionIsRefused() async throws {
        try await Self.with { s in
            let (liam, _) = try await s.owner.createFamilyMember()
            let dana = try await s.service.user("Dana")
            let (token, _) = try await s.owner.createInvitation(sharing: liam)
            _ = try await dana.acceptInvitation(token, pins: IdentityPins())
            try await s.swapKeys(of: dana.keys.userID)
            try await s.expectRefused(naming: dana.keys.userID, familyMember: liam, atVersion: 1) {
                _ = try await s.owner.completeInvitation(token.invitationID, pins: s.owner.pins)
            }
            #expect(try await s.owner.client.grants(liam).count == 1)
            // The keys Dana accepted with are pinned: with them back, the share goes to Dana.
            try await s.restoreKeys(of: dana)
            _ = try await s.owner.completeInvitation(token.invitationID, pins: s.owner.pins)
            #expect(try await dana.readRecords(liam).isEmpty)
            _ = try await dana.currentFMK(liam)
        }
    }
}

/// A flag set once, read from any task.
final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}

/// A value shared with a proxy's handler.
final class Mutable<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}

extension UserSession {
    /// The same device, its requests going through `url` (a plain-HTTP loopback proxy), with the same pins.
    func through(_ url: URL, reporting reporter: CollectingReporter) async throws -> UserSession {
        UserSession(
            keys: keys, deviceID: deviceID, deviceKey: client.credentials!.signingKey, baseURL: url,
            tls: ClientTLS(plainHTTP: .loopback), pins: pins, violationReporter: reporter)
    }

    /// The same device and keys with other pins (another profile of the same user).
    static func sharingDevice(of session: UserSession, pins: IdentityPins) -> UserSession {
        UserSession(
            keys: session.keys, deviceID: session.deviceID, deviceKey: session.client.credentials!.signingKey,
            baseURL: session.client.baseURL, tls: session.client.tls, pins: pins)
    }
}

extension TestHTTP.Answer {
    /// The same answer with one field of its JSON object replaced.
    func replacing(_ field: String, with value: Any) throws -> TestHTTP.Answer {
        var object = try JSONSerialization.jsonObject(with: body) as! [String: Any]
        object[field] = value
        return TestHTTP.Answer(status: status, body: try JSONSerialization.data(withJSONObject: object), headers: headers)
    }
}
