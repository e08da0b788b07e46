import Foundation
import Logging
import RescindCrypto
import RescindPostgres
import RescindTestSupport
import Testing

@testable import GrantService

/// The hand-written OpenAPI document and the router must describe the same API.
@Suite struct OpenAPIDocumentTests {
    /// `METHOD /path/{param}` for every operation under `paths:` of the document (read with Yams).
    static func documentedOperations() throws -> Set<String> {
        Set(try OpenAPIDocument.load(GrantServiceContractTests.documentPath).operations.map(\.description))
    }

    /// `METHOD /path/{param}` for every route the service registers.
    static func routedOperations() -> Set<String> {
        var configuration = GrantServiceConfiguration()
        configuration.database.url = GrantServiceHarness.databaseURL
        let logger = Logger(label: "test.openapi")
        // Nothing here connects: the pool opens connections on first use only.
        let pool = PostgresConnectionPool(
            configuration: try! PostgresConfiguration(url: configuration.database.url), size: 1, logger: logger)
        let signingKey = Ed25519.PrivateKey()
        let outbox = OutboxWriter(signingKey: signingKey, topicPrefix: "")
        let families = FamilyMemberStore(pool: pool, outbox: outbox)
        let router = GrantServiceApplication.buildRouter(
            configuration: configuration, pool: pool, identities: IdentityStore(pool: pool, outbox: outbox), families: families,
            records: RecordStore(pool: pool),
            revocations: RevocationStore(pool: pool, families: families, outbox: outbox, stagingLifetime: .seconds(60)),
            serviceKey: signingKey.publicKey)
        return Set(router.routes.map { "\($0.method.rawValue) \($0.path)" })
    }

    @Test func everyRouteIsDocumentedWithItsMethod() throws {
        let routed = Self.routedOperations()
        let documented = try Self.documentedOperations()
        #expect(routed.count >= 30, "the router enumeration found too few routes: \(routed.sorted())")
        #expect(routed.subtracting(documented).sorted() == [], "routes missing from openapi.yaml")
        #expect(documented.subtracting(routed).sorted() == [], "documented operations with no route")
    }

    /// Any operation that reaches the database may answer 503 `database_unavailable` (a database
    /// that does not answer within the bound, or a lost connection: `FrozenDatabaseProcessTests`);
    /// the document says so for every one of them.
    @Test func everyOperationThatReachesTheDatabaseDocumentsItsUnavailableAnswer() throws {
        let document = try OpenAPIDocument.load(GrantServiceContractTests.documentPath)
        let withoutDatabase: Set<String> = ["GET /health", "GET /ready", "GET /metrics", "GET /v1/openapi.yaml", "GET /v1/service-key"]
        let missing = document.operations.filter { !withoutDatabase.contains($0.description) && !document.statuses(of: $0).contains(503) }
        #expect(missing.map(\.description).sorted() == [])
        #expect(document.statuses(of: try #require(document.operations.first { $0.description == "POST /v1/revocations/{revocationID}/commit" })).contains(503))
    }

    @Test func theServiceServesTheDocument() async throws {
        try await GrantServiceHarness.with { service in
            let answer = try await service.http.send("GET", "v1/openapi.yaml")
            #expect(answer.status == 200)
            #expect(answer.contentType == "application/yaml")
            let file = try Data(
                contentsOf: GrantServiceHarness.repositoryRoot.appendingPathComponent("Sources/GrantService/Resources/openapi.yaml"))
            #expect(answer.body == file)
        }
    }
}
