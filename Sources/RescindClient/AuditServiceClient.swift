import Foundation
import RescindCrypto
import RescindProtocol
import RescindTLS

/// The audit service's HTTP API: the owner's sealed access log and its chain check
/// (authenticated with the caller's grant-service bearer token), and revocation status
/// (the operator's token, which sees every revocation, or the owner's, which sees those of
/// their own family members).
public struct AuditServiceClient: Sendable {
    public let baseURL: URL
    private let grantService: GrantServiceClient?
    private let operatorToken: String?
    private let transport: HTTPTransport

    /// - Parameters:
    ///   - grantService: supplies bearer tokens for the owner-only routes (and monitoring, without an operator token).
    ///   - operatorToken: the audit service's operator token, for the monitoring routes.
    ///   - tls: how the audit service is reached (default: the grant service client's policy,
    ///     else plain HTTP refused and the system's roots trusted).
    public init(
        baseURL: URL, grantService: GrantServiceClient? = nil, operatorToken: String? = nil, timeout: Duration = .seconds(30),
        tls: ClientTLS? = nil
    ) {
        self.baseURL = baseURL
        self.grantService = grantService
        self.operatorToken = operatorToken
        self.transport = HTTPTransport(timeout: timeout, tls: tls ?? grantService?.tls ?? .strict)
    }

    /// Reads an operator token file (one token; a trailing newline is ignored).
    /// - Throws: `GrantServiceError` 401 `no_credentials` when the file cannot be read or is empty.
    public static func operatorToken(fromFile path: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path),
            case let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines),
            !token.isEmpty
        else {
            throw GrantServiceError(status: 401, code: "no_credentials", message: "cannot read an operator token from \(path)")
        }
        return token
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

    /// The entries of the access log up to seq `through`, oldest first (owner only): what a
    /// reader checks against the signed head it fetched first.
    public func accessLog(_ familyMemberID: UUID, through seq: Int64) async throws -> [AccessLogEntry] {
        var entries: [AccessLogEntry] = []
        var before: Int64? = seq + 1
        while let next = before, next > 1 {
            let page = try await accessLog(familyMemberID, before: next, limit: 200)
            entries += page.entries
            before = page.nextBefore
        }
        return entries.sorted { $0.seq < $1.seq }
    }

    /// The chain head the audit service last signed for this family member (owner only).
    public func accessLogHead(_ familyMemberID: UUID) async throws -> AccessLogHead {
        try await get("v1/family-members/\(familyMemberID)/access-log/head", query: [], authenticated: true)
    }

    /// The audit service's signing key, as it claims it: pin it (`AuditKeyPin`), never trust it as served.
    public func serviceKey() async throws -> Ed25519.PublicKey {
        let served: ServiceKeyResponse = try await get("v1/service-key", query: [], authenticated: false)
        do {
            return try Ed25519.PublicKey(rawRepresentation: [UInt8](served.signingPublicKey))
        } catch {
            throw GrantServiceError(status: 502, code: "bad_service_key", message: "the audit service served an unusable signing key")
        }
    }

    /// Reports a key chain violation as this profile's device (its grant-service token).
    /// - Throws: `GrantServiceError` with the service's answer: 409 `duplicate_report` when the
    ///   report id was already recorded, 4xx for a report the service refuses.
    @discardableResult
    public func reportKeyChainViolation(_ violation: KeyChainViolation) async throws -> KeyChainViolationReceipt {
        guard let grantService else {
            throw GrantServiceError(status: 401, code: "no_credentials", message: "reporting needs this device's credentials")
        }
        let response = try await transport.send(
            "POST", baseURL.appendingPathComponent("v1/key-chain-violations"),
            headers: [("Authorization", "Bearer \(try await grantService.bearerToken())")],
            body: try CanonicalJSON.encode(violation))
        guard (200..<300).contains(response.status) else { throw GrantServiceError(status: response.status, body: response.body) }
        return try CanonicalJSON.decode(KeyChainViolationReceipt.self, from: response.body)
    }

    /// The service's re-check of the family member's hash chain (owner only).
    public func verifyChain(_ familyMemberID: UUID) async throws -> ChainVerificationReport {
        try await get("v1/family-members/\(familyMemberID)/access-log/verification", query: [], authenticated: true)
    }

    /// Per-device acknowledgement state of one revocation (operator token, or the owner's:
    /// another owner's revocation is a 404).
    public func revocation(_ eventID: UUID) async throws -> RevocationStatus {
        try await get("v1/revocations/\(eventID)", query: [], authenticated: true, asOperator: true)
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

    private func get<Response: Decodable>(
        _ path: String, query: [URLQueryItem], authenticated: Bool, asOperator: Bool = false
    ) async throws -> Response {
        var components = URLComponents(url: baseURL.appendingPathComponent(path), resolvingAgainstBaseURL: false)!
        if !query.isEmpty { components.queryItems = query }
        var headers: [(String, String)] = []
        if asOperator, let operatorToken {
            headers.append(("Authorization", "Bearer \(operatorToken)"))
        } else if authenticated {
            guard let grantService else {
                throw GrantServiceError(status: 401, code: "no_credentials", message: "this needs the owner's credentials (or, for revocations, the operator token)")
            }
            headers.append(("Authorization", "Bearer \(try await grantService.bearerToken())"))
        }
        let response = try await transport.send("GET", components.url!, headers: headers)
        guard (200..<300).contains(response.status) else { throw GrantServiceError(status: response.status, body: response.body) }
        return try CanonicalJSON.decode(Response.self, from: response.body)
    }
}
