import Foundation
import Logging
import RescindCrypto
import RescindPostgres
import RescindProtocol
import RescindTestSupport
import Testing

@testable import AuditService

/// The audit service answers as its `openapi.yaml` says, response schemas included: every
/// operation driven against the real service (with the real grant service confirming owners'
/// tokens) as the operator, as an owner, as another owner, without and with a refused
/// credential, with unknown and malformed ids and junk queries. An undocumented status fails.
@Suite struct AuditServiceContractTests {
    static let documentPath = "Sources/AuditService/Resources/openapi.yaml"

    /// `METHOD /path/{param}` for every route the service registers.
    static func routedOperations() throws -> Set<String> {
        let logger = Logger(label: "test.openapi")
        let database = try PostgresConfiguration(url: GrantServiceHarness.databaseURL)
        // Nothing here connects: the pool opens connections on first use only.
        let pool = PostgresConnectionPool(configuration: database, size: 1, logger: logger)
        let metrics = AuditMetrics()
        let router = AuditServiceApplication.buildRouter(
            configuration: AuditServiceConfiguration(), pool: pool, metrics: metrics, health: ConsumerHealth(),
            signingKey: Ed25519.PrivateKey(), grantService: nil,
            monitoring: MonitoringAuthorization(operatorToken: nil, grantService: nil, metrics: nil),
            hub: EventStreamHub(pool: pool, database: database, pollInterval: .seconds(1), logger: logger))
        return Set(router.routes.map { "\($0.method.rawValue) \($0.path)" })
    }

    @Test func theDocumentListsExactlyTheRoutesTheRouterRegisters() throws {
        let documented = Set(try OpenAPIDocument.load(Self.documentPath).operations.map(\.description))
        let routed = try Self.routedOperations()
        #expect(routed.count >= 15, "the router enumeration found too few routes: \(routed.sorted())")
        #expect(routed.subtracting(documented).sorted() == [], "routes missing from openapi.yaml")
        #expect(documented.subtracting(routed).sorted() == [], "documented operations with no route")
    }

    /// The revocation list's `state` filter names exactly the states a device can be in, so a
    /// client the document generates never sends one the service refuses, nor misses one.
    @Test func theStateFilterListsEveryDeviceState() throws {
        let document = try OpenAPIDocument.load(Self.documentPath)
        let paths = document.root["paths"] as? [String: Any]
        let list = (paths?["/v1/revocations"] as? [String: Any])?["get"] as? [String: Any]
        let state = (list?["parameters"] as? [[String: Any]])?.first { $0["name"] as? String == "state" }
        let documented = (state?["schema"] as? [String: Any])?["enum"] as? [String]
        #expect(documented == DeviceAckState.allCases.map(\.rawValue))
    }

    /// Any operation that reaches the database may answer 503 `database_unavailable`; the
    /// document says so for every one of them (the monitoring page's static files, the health and
    /// metrics endpoints and the credential check do not read the database).
    @Test func everyOperationThatReachesTheDatabaseDocumentsItsUnavailableAnswer() throws {
        let document = try OpenAPIDocument.load(Self.documentPath)
        let withoutDatabase: Set<String> = [
            "GET /health", "GET /ready", "GET /metrics", "GET /v1/openapi.yaml", "GET /v1/service-key", "GET /",
            "GET /monitor", "GET /monitor.js", "GET /v1/monitoring/credential",
        ]
        let missing = document.operations.filter { !withoutDatabase.contains($0.description) && !document.statuses(of: $0).contains(503) }
        #expect(missing.map(\.description).sorted() == [])
    }

    /// The checker itself refuses what the document does not say: an undocumented status, a
    /// wrong content type, a missing or extra property, a wrong format or enum value.
    @Test func theContractCheckRefusesAnswersTheDocumentDoesNotDescribe() throws {
        let contract = OpenAPIContract(document: try OpenAPIDocument.load(Self.documentPath))
        let id = UUID().uuidString
        func problems(_ path: String, _ status: Int, _ json: String, type: String = "application/json") -> Int {
            let before = contract.problems.count
            contract.record(method: "GET", path: path, status: status, contentType: type, body: Data(json.utf8))
            return contract.problems.count - before
        }
        #expect(problems("/v1/revocations/\(id)", 200, #"{"event_id":"\#(id)"}"#) == 7)  // required properties missing (revoked_user_id is not: a rotation has none)
        #expect(problems("/v1/monitoring/credential", 200, #"{"scope":"admin"}"#) == 1)  // not in the enum
        #expect(problems("/v1/monitoring/credential", 200, #"{"scope":"owner","user_id":"nope"}"#) == 1)  // not a uuid
        #expect(problems("/v1/monitoring/credential", 200, #"{"scope":"owner","extra":1}"#) == 1)  // additional property
        #expect(problems("/v1/monitoring/credential", 500, #"{"error":{"code":"internal","message":"x"}}"#) == 1)  // undocumented
        #expect(problems("/v1/monitoring/credential", 401, #"{"error":"nope"}"#) == 1)  // not the error shape
        #expect(problems("/health", 200, #"{"status":"ok"}"#, type: "text/plain") == 1)  // wrong content type
        let rejection = #"{"topic":"t","partition":-1,"offset":0,"reason":"r","received_at":"2026-01-01T00:00:00.000Z"}"#
        #expect(problems("/v1/rejections", 200, #"{"rejections":[\#(rejection)],"counts":[]}"#) == 1)  // below minimum
        #expect(problems("/v1/nothing-here", 200, "{}") == 1)  // not an operation of the document
        #expect(problems("/health", 200, #"{"status":"ok"}"#) == 0)
    }

    @Test(.timeLimit(.minutes(3)))
    func everyAnswerConformsToTheDocument() async throws {
        let contract = OpenAPIContract(document: try OpenAPIDocument.load(Self.documentPath))
        try await GrantServiceHarness.with { grant in
            let adultA = try await EndToEndTests.member("Adult A", on: grant)
            let adultB = try await EndToEndTests.member("Adult B", on: grant)
            let tokenA = try await EndToEndTests.token(adultA, grant: grant)
            let tokenB = try await EndToEndTests.token(adultB, grant: grant)
            try await AuditTestBed.with({ $0.grantService.url = grant.baseURL.absoluteString }) { bed in
                let emma = TestFamily(ownerUserID: adultA.userID), noah = TestFamily(ownerUserID: adultB.userID)
                let phone = TestFamily.Device(userID: UUID()), laptop = TestFamily.Device(userID: adultA.userID)
                try await bed.publish(emma.accessEvent(.familyMemberCreated))
                try await bed.publish(noah.accessEvent(.familyMemberCreated))
                let revocation = emma.revocation(of: phone.userID, devices: [phone, laptop])
                try await bed.publish(revocation)
                try await bed.publish(TestFamily.ack(phone, for: revocation), signedBy: phone.key)
                try await bed.publish(
                    TestFamily.ack(laptop, for: revocation, outcome: .failed, error: "disk full"), signedBy: laptop.key)
                try await bed.publishRaw(.deviceAcks, key: nil, value: Data("garbage".utf8))
                let pending = GovernanceNotice(
                    userID: adultA.userID, change: .rotateIdentity, state: .pending, operationID: UUID(), actorDeviceID: UUID(),
                    effectiveAt: Timestamp.truncated(Date().addingTimeInterval(86_400)), occurredAt: Timestamp.truncated(Date()))
                try await bed.publish(pending)
                try await bed.eventually("acknowledged and rejected") {
                    let states = try await bed.deviceStates(revocation.eventID)
                    let rejected = try await bed.count("SELECT count(*) FROM rejected_messages")
                    let notices = try await bed.count("SELECT count(*) FROM governance_notices")
                    return rejected == 1 && states.count == 2 && !states.values.contains("pending") && notices == 1
                }
                let base = bed.service.baseURL
                func send(_ path: String, _ token: String? = nil, headers: [(String, String)] = []) async throws -> TestHTTP.Answer {
                    try await contract.send("GET", path, on: base, token: token, headers: headers)
                }

                // Open routes.
                for route in ["/health", "/ready", "/metrics", "/v1/service-key", "/", "/monitor", "/monitor.js"] {
                    #expect(try await send(route).status == 200, "\(route)")
                }
                let document = try await send("/v1/openapi.yaml")
                #expect(document.contentType == "application/yaml")
                #expect(document.body == (try Data(contentsOf: GrantServiceHarness.repositoryRoot.appendingPathComponent(Self.documentPath))))

                // The monitoring API as the operator and as the owner.
                for token in [bed.operatorToken, tokenA] {
                    #expect(try await send("/v1/monitoring/credential", token).status == 200)
                    let list = try await send("/v1/revocations?family_member_id=\(emma.familyMemberID)&limit=5", token)
                    #expect(list.status == 200)
                    #expect(list.text.contains(revocation.eventID.uuidString))
                    #expect(try await send("/v1/revocations", token).status == 200)
                    #expect(try await send("/v1/revocations/\(revocation.eventID)", token).status == 200)
                    // The page's overview: counts per state, the plot, the state filter.
                    #expect(try await send("/v1/monitoring/summary", token).text.contains(#""count":1,"state":"failed""#))
                    #expect(try await send("/v1/monitoring/summary?family_member_id=\(emma.familyMemberID)", token).status == 200)
                    let plot = try await send("/v1/monitoring/ack-times.svg?family_member_id=\(emma.familyMemberID)", token)
                    #expect(plot.status == 200 && plot.text.hasPrefix("<svg"))
                    #expect(try await send("/v1/revocations?state=failed", token).text.contains(revocation.eventID.uuidString))
                    #expect(!(try await send("/v1/revocations?state=overdue", token).text.contains(revocation.eventID.uuidString)))
                    #expect(try await send("/v1/revocations?state=maybe", token).status == 400)
                    #expect(try await send("/v1/monitoring/summary?family_member_id=x", token).status == 400)
                }
                #expect(try await send("/v1/monitoring/summary").status == 401)
                #expect(try await send("/v1/monitoring/ack-times.svg").status == 401)
                #expect(try await send("/v1/monitoring/summary?family_member_id=\(emma.familyMemberID)", tokenB).status == 403)
                #expect(try await send("/v1/monitoring/ack-times.svg?family_member_id=\(UUID())", tokenB).status == 404)
                #expect(try await send("/v1/rejections", bed.operatorToken).text.contains("malformed"))
                #expect(try await send("/v1/rejections?limit=500", bed.operatorToken).status == 200)
                #expect(try await send("/v1/rejections", tokenA).status == 403)
                // Changes to who a user is: the operator sees every user's, an owner their own.
                for token in [bed.operatorToken, tokenA] {
                    #expect(try await send("/v1/governance-notices?limit=5", token).text.contains(pending.noticeID.uuidString))
                }
                #expect(!(try await send("/v1/governance-notices", tokenB).text.contains(pending.noticeID.uuidString)))
                #expect(try await send("/v1/governance-notices?limit=0", tokenB).status == 400)
                #expect(try await send("/v1/revocations/\(revocation.eventID)", tokenB).status == 404)
                #expect(try await send("/v1/revocations?family_member_id=\(emma.familyMemberID)", tokenB).status == 403)
                #expect(try await send("/v1/revocations?family_member_id=\(UUID())", tokenB).status == 404)

                // The access log, the owner's only.
                let emmaLog = "/v1/family-members/\(emma.familyMemberID)/access-log"
                #expect(try await send(emmaLog, tokenA).status == 200)
                #expect(try await send(emmaLog + "?limit=1", tokenA).text.contains("next_before"))
                #expect(try await send(emmaLog + "?limit=200&before=9223372036854775807", tokenA).status == 200)
                #expect(try await send(emmaLog + "/verification", tokenA).status == 200)
                #expect(try await send(emmaLog + "/head", tokenA).status == 200)
                #expect(try await send(emmaLog + "/head", tokenB).status == 403)
                #expect(try await send(emmaLog, tokenB).status == 403)
                #expect(try await send(emmaLog + "/verification", bed.operatorToken).status == 401)

                // Key chain violations: reported as the device (the token's), listed by the operator and the owner.
                let violation = KeyChainViolation(
                    code: .notAHolder, familyMemberID: emma.familyMemberID, reporterUserID: adultB.userID,
                    reporterDeviceID: adultB.session.deviceID, offeredFMKVersion: 2, statementSeq: nil, verifiedSeq: 1,
                    detail: "a grant the owner never made", detectedAt: Timestamp.truncated(Date()))
                let reported = try await contract.send(
                    "POST", "/v1/key-chain-violations", on: base, token: tokenB, body: try CanonicalJSON.encode(violation))
                #expect(reported.status == 201)
                contract.recordAcceptedRequest(
                    method: "POST", path: "/v1/key-chain-violations", contentType: "application/json",
                    body: try CanonicalJSON.encode(violation))
                #expect(try await contract.send(
                    "POST", "/v1/key-chain-violations", on: base, token: tokenB, body: try CanonicalJSON.encode(violation)
                ).status == 409)
                #expect(try await contract.send(
                    "POST", "/v1/key-chain-violations", on: base, token: tokenA, body: try CanonicalJSON.encode(violation)
                ).status == 403)
                for token in [bed.operatorToken, tokenA] {
                    let listed = try await send("/v1/key-chain-violations?family_member_id=\(emma.familyMemberID)&limit=5", token)
                    #expect(listed.status == 200 && listed.text.contains(violation.reportID.uuidString))
                }
                #expect(try await send("/v1/key-chain-violations", tokenB).status == 200)

                // The event stream: its head, as the operator and the owner, resumed either way.
                for (token, query, headers) in [
                    (bed.operatorToken, "", [("Last-Event-ID", "0")]), (tokenA, "?after=0&family_member_id=\(emma.familyMemberID)", []),
                ] {
                    var all = headers
                    all.append(("Authorization", "Bearer \(token)"))
                    let head = try await TestHTTP.head(ofStream: URL(string: base.absoluteString + "/v1/events" + query)!, headers: all)
                    #expect(head.status == 200)
                    #expect(head.text.hasPrefix("retry: 2000"))
                    contract.record(method: "GET", path: "/v1/events" + query, status: head.status, contentType: head.contentType, body: Data())
                }
                for (token, query, headers) in [
                    (tokenA, "?after=-1", [(String, String)]()), (tokenA, "?after=x", []), (tokenA, "?family_member_id=x", []),
                    (tokenA, "", [("Last-Event-ID", "x")]), (tokenA, "", [("Last-Event-ID", "-5")]),
                    (tokenB, "?family_member_id=\(emma.familyMemberID)", []), (tokenB, "?family_member_id=\(UUID())", []),
                    ("refused-token", "", []),
                ] {
                    let answer = try await send("/v1/events" + query, token, headers: headers)
                    #expect((400..<500).contains(answer.status), "\(query) \(headers)")
                }
                _ = try await send("/v1/events")

                // Junk queries, then junk everywhere but the stream (which a valid request keeps open).
                for query in ["limit=0", "limit=501", "limit=x", "limit=%00", "family_member_id=x", "family_member_id="] {
                    #expect(try await send("/v1/revocations?\(query)", bed.operatorToken).status == 400, "\(query)")
                }
                for query in ["limit=0", "limit=201", "before=0", "before=-1", "before=99999999999999999999", "limit=1.5"] {
                    #expect(try await send("\(emmaLog)?\(query)", tokenA).status == 400, "\(query)")
                }
                #expect(try await send("/v1/rejections?limit=501", bed.operatorToken).status == 400)
                try await contract.sendInvalidRequests(on: base, token: tokenB, skip: ["GET /v1/events"])
            }
        }
        #expect(contract.problems == [], "answers that differ from openapi.yaml")
        #expect(contract.coverageGaps() == [], "operations not exercised both ways")
    }
}
