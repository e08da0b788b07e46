import Foundation
import RescindCrypto
import RescindProtocol
import RescindTLS

/// The audit service's HTTP API: the owner's sealed access log and its chain check
/// (authenticated with the caller's grant-service bearer token), and revocation status.
public struct AuditServiceClient: Sendable {
    public let baseURL: URL
    private let grantService: GrantServiceClient?
    private let transport: HTTPTransport

    /// - Parameters:
    ///   - grantService: supplies bearer tokens for the owner-only routes.
    ///   - tls: how the audit service is reached (default: the grant service client's policy,
    ///     else plain HTTP refused and the system's roots trusted).
    public init(baseURL: URL, grantService: GrantServiceClient? = nil, timeout: Duration = .seconds(30), tls: ClientTLS? = nil) {
        self.baseURL = baseURL
        self.grantService = grantService
        self.transport = HTTPTransport(timeout: timeout, tls: tls ?? grantService?.tls ?? .strict)
    }

    /// One page of a family member's access log, newest first (owner only).
    public func accessLog(_ familyMemberID: UUID, before: Int64? = nil, limit: Int = 50) async throws -> AccessLogPage {
        var query = [URLQueryItem(name: "limit", value: String(limit))]
        if let before { query.append(URLQueryItem(name: "before", value: String(before))) }
        return try await get("v1/family-members/\(familyMemberID)/access-log", query: query, authenticated: true)
    }

    /// Every entry of the access log, oldest first.
    public func fullAccessLog(_ familyMemberID: UUID) async throws -> [AccessLogEntry] {
        var entries: [AccessLogEntry] = []
        var before: Int64?
        repeat {
            let page = try await accessLog(familyMemberID, before: before, limit: 200)
            entries += page.entries
            before = page.nextBefore
        } while before != nil
        return entries.sorted { $0.seq < $1.seq }
    }

    /// The service's re-check of the family member's hash chain (owner only).
    public func verifyChain(_ familyMemberID: UUID) async throws -> ChainVerificationReport {
        try await get("v1/family-members/\(familyMemberID)/access-log/verification", query: [], authenticated: true)
    }

    /// Per-device acknowledgement state of one revocation.
    public func revocation(_ eventID: UUID) async throws -> RevocationStatus {
        try await get("v1/revocations/\(eventID)", query: [], authenticated: false)
    }

    /// Whether `GET /ready` answers 200 (the service is up and reaches its database).
    public func isReady() async throws -> Bool {
        try await transport.send("GET", baseURL.appendingPathComponent("ready")).status == 200
    }

    /// Opens an entry's sealed details with the owner's X25519 key.
    public static func details(of entry: AccessLogEntry, keys: UserKeys) throws -> AuditDetails {
        let plaintext = try AnonymousSealedBox.open([UInt8](entry.encryptedDetails), using: keys.agreementKey)
        return try CanonicalJSON.decode(AuditDetails.self, from: Data(plaintext))
    }

    private func get<Response: Decodable>(_ path: String, query: [URLQueryItem], authenticated: Bool) async throws -> Response {
        var components = URLComponents(url: baseURL.appendingPathComponent(path), resolvingAgainstBaseURL: false)!
        if !query.isEmpty { components.queryItems = query }
        var headers: [(String, String)] = []
        if authenticated {
            guard let grantService else {
                throw GrantServiceError(status: 401, code: "no_credentials", message: "the access log needs the owner's credentials")
            }
            headers.append(("Authorization", "Bearer \(try await grantService.bearerToken())"))
        }
        let response = try await transport.send("GET", components.url!, headers: headers)
        guard (200..<300).contains(response.status) else { throw GrantServiceError(status: response.status, body: response.body) }
        return try CanonicalJSON.decode(Response.self, from: response.body)
    }
}
