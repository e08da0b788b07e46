import Foundation
import RescindClient
import RescindCrypto
import RescindProtocol
import RescindServiceSupport
import RescindTLS
import RescindTestSupport
import Testing

/// The grant service answers as `openapi.yaml` says, request and response schemas included:
/// the real clients' flows (registration, enrolment, family members, records, grants, a
/// revocation previewed, begun and abandoned, one committed, a stolen-device revocation, an identity
/// rotation, ownership transfer, an invitation, recovery-key orders) run through a recording proxy that checks every answer, and
/// every operation then gets junk: unknown and malformed ids, no or a refused credential,
/// malformed and mistyped bodies, junk queries. An undocumented status fails the test.
/// (`OpenAPIDocumentTests` checks that document and router list the same operations.)
@Suite struct GrantServiceContractTests {
    static let documentPath = "Sources/GrantService/Resources/openapi.yaml"

    @Test(.timeLimit(.minutes(3)))
    func everyAnswerConformsToTheDocument() async throws {
        let contract = OpenAPIContract(document: try OpenAPIDocument.load(Self.documentPath))
        try await GrantServiceHarness.with { grant in
            let proxy = try await RecordingProxy.start(forwardingTo: grant.baseURL, contract: contract)
            do {
                try await Self.driveValidFlows(through: proxy.baseURL, contract: contract, service: grant.baseURL)
            } catch {
                await proxy.stop()
                throw error
            }
            await proxy.stop()
        }
        #expect(contract.problems == [], "answers that differ from openapi.yaml")
        #expect(contract.coverageGaps() == [], "operations not exercised both ways")
        #expect(contract.answers > 250)
        #expect(contract.requestsChecked >= 20, "the client's accepted requests were checked against the request schemas")
    }

    static func driveValidFlows(through url: URL, contract: OpenAPIContract, service: URL) async throws {
        let tls = ClientTLS(plainHTTP: .loopback)
        func register(_ name: String) async throws -> UserSession {
            let keys = UserKeys.generate()
            return try await UserSession.register(
                keys: keys, displayName: name, deviceName: "\(name)'s phone", deviceKind: .phone,
                recoveryKey: try TestRecovery.key(for: keys.userID), baseURL: url, tls: tls)
        }
        let adultA = try await register("Adult A"), adultB = try await register("Adult B"), adultC = try await register("Adult C")
        let (emma, fmk) = try await adultA.createFamilyMember()
        let record = try await adultA.putRecord(emma, plaintext: Array("blood type O+".utf8), fmk: fmk, version: 1)
        _ = try await adultA.putRecord(emma, plaintext: Array("allergy: penicillin".utf8), fmk: fmk, version: 1)
        _ = try await adultA.grant(emma, to: adultB.keys.userID)
        _ = try await adultA.grant(emma, to: adultC.keys.userID)
        _ = try await adultC.readRecords(emma)
        // C's device now has a check-in for Emma: the device list carries a family member.
        _ = try await adultC.client.devices()
        let client = adultA.client
        _ = try await client.serviceKey()
        _ = try await client.isReady()
        _ = try await client.me()
        _ = try await client.devices()
        _ = try await client.user(adultC.keys.userID)
        _ = try await client.identityRotations(of: adultC.keys.userID)
        _ = try await client.familyMembers()
        _ = try await client.familyMember(emma)
        _ = try await client.fmkVersion(emma)
        _ = try await client.grants(emma)
        _ = try await client.keyStatements(emma, after: 1)
        _ = try await client.record(emma, record)
        // An invitation created, accepted by B and completed by A (pins in scratch files).
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("contract-pins-\(UUID().uuidString)")
        let pinsA = try IdentityPins(path: scratch.path + "-a.json"), pinsB = try IdentityPins(path: scratch.path + "-b.json")
        let (invitation, _) = try await adultA.createInvitation()
        _ = try await adultB.acceptInvitation(invitation, pins: pinsB)
        _ = try await adultA.completeInvitation(invitation.invitationID, pins: pinsA)
        let token = try await client.bearerToken()
        try await contract.send("GET", "/v1/family-members/\(emma)/records?since=0&limit=1", on: url, token: token)
        for route in ["/health", "/metrics", "/v1/openapi.yaml"] { try await contract.send("GET", route, on: url) }

        // A revocation previewed, begun and abandoned, then one committed.
        _ = try await client.revocationPreview(emma, user: adultC.keys.userID)
        let begun = try await client.beginRevocation(emma, BeginRevocationRequest(revokedUserID: adultC.keys.userID, reason: "test"))
        try await client.abandonRevocation(begun.revocationID)
        let committed = try await adultA.revoke(emma, user: adultC.keys.userID, reason: "custody change")
        _ = try await adultA.revocationExposure(committed.eventID)
        try await client.deleteRecord(emma, record)
        // The deleted record in the owner's trash, restored (the later revocations re-encrypt the
        // version its restore kept).
        _ = try await client.recordVersions(emma)
        _ = try await client.restoreRecord(emma, record)
        let (fmk2, version2) = try await adultA.currentFMK(emma)
        _ = try await adultA.putRecord(emma, recordID: record, plaintext: Array("blood type A+".utf8), fmk: fmk2, version: version2)

        // Another device enrolled and retired.
        let tablet = try await adultA.addDevice(name: "Adult A's tablet", kind: .tablet)
        try await client.retireDevice(tablet.deviceID)

        // A user with a recovery key: its orders retire and restore their phone and enrol a laptop.
        let recovery = try RecoveryKey.generate()
        let adultD = try await UserSession.register(
            keys: .generate(), displayName: "Adult D", deviceName: "Adult D's phone", recoveryKey: recovery, baseURL: url, tls: tls)
        let anonymous = GrantServiceClient(baseURL: url, tls: tls)
        try await recovery.order(.retire, for: adultD.keys.userID, deviceID: adultD.deviceID, through: anonymous)
        try await recovery.order(.restore, for: adultD.keys.userID, deviceID: adultD.deviceID, through: anonymous)
        let laptopKey = Ed25519.PrivateKey(), laptopID = UUID()
        try await recovery.order(
            .enrol, for: adultD.keys.userID,
            device: RegisterDeviceRequest(
                deviceID: laptopID, name: "Adult D's laptop", kind: .laptop, signingPublicKey: Data(laptopKey.publicKey.rawRepresentation)),
            through: anonymous)

        // D's identity rotations, governed: the phone begins one and the laptop (enrolled by the
        // recovery key, so it governs at once) vetoes it, then clears the phone; the next one the
        // laptop approves (it then waits for its floor, an hour after it began) and the recovery key too;
        // of two more, the recovery key cancels one and approves the other.
        let laptop = GrantServiceClient(baseURL: url, credentials: .init(deviceID: laptopID, signingKey: laptopKey), tls: tls)
        let (keys2, keys3, keys4) = (UserKeys.generate(userID: adultD.keys.userID), UserKeys.generate(userID: adultD.keys.userID), UserKeys.generate(userID: adultD.keys.userID))
        let vetoed = try await adultD.registerRotation(to: keys2, currentGeneration: 1)
        _ = try await laptop.governedOperations()
        _ = try await laptop.vetoOperation(vetoed.operationID)
        try await laptop.clearDevice(adultD.deviceID)
        let second = try await adultD.registerRotation(to: keys2, currentGeneration: 1)
        _ = try await laptop.approveOperation(second.operationID)
        try await recovery.approve(second, through: anonymous)
        let rotatedD = adultD.withKeys(keys2)
        let cancelled = try await rotatedD.registerRotation(to: keys3, currentGeneration: 2)
        try await recovery.order(.cancel, for: adultD.keys.userID, operationID: cancelled.operationID, through: anonymous)
        let approved = try await rotatedD.registerRotation(to: keys4, currentGeneration: 2)
        try await recovery.approve(approved, through: anonymous)
        try await recovery.order(.clear, for: adultD.keys.userID, deviceID: adultD.deviceID, through: anonymous)
        try await recovery.order(.vouch, for: adultD.keys.userID, deviceID: laptopID, through: anonymous)
        // A new recovery key for D (bound by D's current identity key), approved by the current one.
        let newRecovery = try RecoveryKey.generate()
        let change = try await adultD.withKeys(keys4).setRecoveryKey(newRecovery)
        try await recovery.order(.approve, for: adultD.keys.userID, operationID: change.operationID, through: anonymous)

        // Ownership to B, who re-wraps under their own master key, then revokes A everywhere.
        try await adultA.transferOwnershipAtOnce(emma, to: adultB.keys.userID)
        try await adultB.adoptOwnership(emma)
        _ = try await adultB.revokeEverywhere(user: adultA.keys.userID, reason: "stolen phone")
        // B's own phone stolen: a rotation that revokes nobody.
        _ = try await adultB.rotate(emma, reason: "owner's phone stolen")

        // C's identity rotation begun, then withdrawn by the phone that began it.
        let begunByC = try await adultC.registerRotation(to: .generate(userID: adultC.keys.userID), currentGeneration: 1)
        _ = try await adultC.client.cancelOperation(begunByC.operationID)

        // Junk queries, then junk everywhere.
        let tokenB = try await adultB.client.bearerToken()
        for query in ["since=-1", "since=x", "limit=0", "limit=1001", "limit=%00", "since=99999999999999999999"] {
            try await contract.send("GET", "/v1/family-members/\(emma)/records?\(query)", on: url, token: tokenB)
        }
        try await contract.send(
            "POST", "/v1/family-members", on: url, token: tokenB, body: Data(repeating: UInt8(ascii: "["), count: 2 << 20))
        try await contract.sendInvalidRequests(on: url, token: tokenB)
    }

    /// Every operation that documents a 429 answers it, as documented, once its budget is spent:
    /// a service whose address budgets allow two requests each and whose device budgets allow
    /// none (one user registered and signed in first), then junk everywhere.
    @Test(.timeLimit(.minutes(2)))
    func everyRateLimitedOperationAnswers429AsDocumented() async throws {
        let contract = OpenAPIContract(document: try OpenAPIDocument.load(Self.documentPath))
        let budget = RateLimiter.Rate(burst: 2, perMinute: 0.0001)
        try await GrantServiceHarness.with({
            $0.limits.registrationsPerAddress = budget
            $0.limits.registrations = budget
            $0.limits.challengesPerAddress = budget
            $0.limits.tokensPerAddress = budget
            $0.limits.enrolmentsPerAddress = budget
            $0.limits.identityOperationsPerDevice = RateLimiter.Rate(burst: 0, perMinute: 0)
            $0.limits.requestsPerDevice = RateLimiter.Rate(burst: 0, perMinute: 0)
        }) { grant in
            let user = try await UserSession.register(
                keys: .generate(), displayName: "Adult A", deviceName: "Adult A's phone", baseURL: grant.baseURL, tls: grant.clientTLS)
            let token = try await user.client.bearerToken()
            try await contract.sendInvalidRequests(on: grant.baseURL, token: token)
        }
        #expect(contract.problems == [], "answers that differ from openapi.yaml")
        let seen = contract.seen
        let unexercised = contract.document.operations.filter { contract.document.statuses(of: $0).contains(429) && seen[$0]?.contains(429) != true }
        #expect(unexercised.isEmpty, "documented 429s never seen: \(unexercised.map(\.description))")
        #expect(contract.document.operations.filter { contract.document.statuses(of: $0).contains(429) }.count >= 35)
    }
}
