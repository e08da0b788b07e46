import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import RescindCrypto
import RescindPostgres
import RescindProtocol
import Testing

@testable import GrantService

/// The grant service's router driven in process (`app.test(.router)`), for everything that is
/// decided before the database is reached: validation errors, refused authentication, the JSON
/// error shape, body limits. No PostgreSQL and no broker: the pool points at a closed port and
/// opens connections on first use only, which none of these requests reaches.
@Suite struct GrantRouterTests {
    static let maxBodyBytes = 4096

    static func application() throws -> some ApplicationProtocol {
        var configuration = GrantServiceConfiguration()
        configuration.http.maxBodyBytes = maxBodyBytes
        let logger = Logger(label: "test.grant-router")
        let pool = PostgresConnectionPool(
            configuration: try PostgresConfiguration(url: "postgresql://nobody@127.0.0.1:9/nothing?connect_timeout=1"), size: 1,
            logger: logger)
        let signingKey = Ed25519.PrivateKey()
        let outbox = OutboxWriter(signingKey: signingKey, topicPrefix: "")
        let families = FamilyMemberStore(pool: pool, outbox: outbox)
        let router = GrantServiceApplication.buildRouter(
            configuration: configuration, pool: pool, identities: IdentityStore(pool: pool, outbox: outbox), families: families,
            records: RecordStore(pool: pool),
            revocations: RevocationStore(pool: pool, families: families, outbox: outbox, stagingLifetime: .seconds(60)),
            serviceKey: signingKey.publicKey)
        return Application(router: router, logger: logger)
    }

    /// `{"error": {"code", "message"}}` with the status and code expected.
    static func expectError(_ response: TestResponse, _ status: HTTPResponse.Status, _ code: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(response.status == status, sourceLocation: sourceLocation)
        #expect(response.headers[.contentType] == "application/json", sourceLocation: sourceLocation)
        let object = try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any]
        let error = object?["error"] as? [String: Any]
        #expect(object?.count == 1 && error?.count == 2, "\(String(buffer: response.body))", sourceLocation: sourceLocation)
        #expect(error?["code"] as? String == code, "\(String(buffer: response.body))", sourceLocation: sourceLocation)
        #expect((error?["message"] as? String)?.isEmpty == false, sourceLocation: sourceLocation)
    }

    static func registration(displayName: String = "Adult A", agreementKeyBytes: Int = 32) -> ByteBuffer {
        let identity = Ed25519.PrivateKey()
        let request = RegisterUserRequest(
            userID: UUID(), displayName: displayName,
            agreementPublicKey: Data(X25519.PrivateKey().publicKey.rawRepresentation.prefix(agreementKeyBytes)),
            identityPublicKey: Data(identity.publicKey.rawRepresentation),
            device: RegisterDeviceRequest(deviceID: UUID(), name: "phone", signingPublicKey: Data(Ed25519.PrivateKey().publicKey.rawRepresentation)),
            signature: Data(count: 64))
        return ByteBuffer(bytes: try! CanonicalJSON.encode(request))
    }

    @Test func healthNeedsNothingElse() async throws {
        try await Self.application().test(.router) { client in
            try await client.execute(uri: "/health", method: .get) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body).contains(#""status":"ok""#))
            }
        }
    }

    @Test func anUnknownRouteIsA404InTheErrorShape() async throws {
        try await Self.application().test(.router) { client in
            try await client.execute(uri: "/v1/no-such-thing", method: .get) { try Self.expectError($0, .notFound, "not_found") }
        }
    }

    /// Every authenticated route refuses a missing, non-bearer, empty or oversized token before any lookup.
    /// A path the service serves, asked with a method it does not serve: 405 with `Allow`
    /// naming every method of that path (captures included), before authentication; a path
    /// that names nothing stays 404.
    @Test func aMethodThePathDoesNotServeIsA405WithAllow() async throws {
        try await Self.application().test(.router) { client in
            let trace = try await client.execute(uri: "/health", method: .trace)
            try Self.expectError(trace, .methodNotAllowed, "method_not_allowed")
            #expect(trace.headers[.allow] == "GET")
            let put = try await client.execute(uri: "/v1/family-members/\(UUID())", method: .put)
            try Self.expectError(put, .methodNotAllowed, "method_not_allowed")
            #expect(put.headers[.allow] == "GET")
            let delete = try await client.execute(uri: "/v1/auth/challenge", method: .delete)
            #expect(delete.status == .methodNotAllowed)
            #expect(delete.headers[.allow] == "POST")
            try Self.expectError(try await client.execute(uri: "/v1/nothing-here", method: .trace), .notFound, "not_found")
            try Self.expectError(try await client.execute(uri: "/v1/family-members/x/y/z/w", method: .get), .notFound, "not_found")
        }
    }

    @Test(arguments: [nil, "Basic YWRtaW46YWRtaW4=", "Bearer ", "Bearer " + String(repeating: "a", count: 129)])
    func authenticationIsRefusedWithoutAUsableBearerToken(header: String?) async throws {
        try await Self.application().test(.router) { client in
            for (method, uri) in [(HTTPRequest.Method.get, "/v1/me"), (.get, "/v1/family-members"), (.post, "/v1/family-members"),
                                  (.post, "/v1/revocations/\(UUID())/commit"), (.delete, "/v1/devices/\(UUID())")] {
                var headers: HTTPFields = [:]
                if let header { headers[.authorization] = header }
                try await client.execute(uri: uri, method: method, headers: headers) { try Self.expectError($0, .unauthorized, "unauthenticated") }
            }
        }
    }

    @Test func aBodyThatIsNotJSONIsA400() async throws {
        try await Self.application().test(.router) { client in
            try await client.execute(uri: "/v1/users", method: .post, headers: [.contentType: "application/json"], body: ByteBuffer(string: "{not json")) {
                try Self.expectError($0, .badRequest, "bad_request")
            }
        }
    }

    @Test func registrationFieldsAreValidatedBeforeTheDatabase() async throws {
        try await Self.application().test(.router) { client in
            try await client.execute(uri: "/v1/users", method: .post, headers: [.contentType: "application/json"], body: Self.registration(displayName: "")) {
                try Self.expectError($0, .badRequest, "bad_request")
            }
            try await client.execute(uri: "/v1/users", method: .post, headers: [.contentType: "application/json"], body: Self.registration(agreementKeyBytes: 31)) {
                try Self.expectError($0, .unprocessableContent, "invalid_public_key")
            }
            // Well-formed keys, but the signature is not the identity key's.
            try await client.execute(uri: "/v1/users", method: .post, headers: [.contentType: "application/json"], body: Self.registration()) {
                try Self.expectError($0, .unprocessableContent, "bad_signature")
            }
        }
    }

    @Test func aBodyOverTheLimitIsA413() async throws {
        try await Self.application().test(.router) { client in
            let body = ByteBuffer(repeating: UInt8(ascii: " "), count: Self.maxBodyBytes + 1)
            try await client.execute(uri: "/v1/users", method: .post, headers: [.contentType: "application/json"], body: body) {
                try Self.expectError($0, .contentTooLarge, "payload_too_large")
            }
        }
    }
}
