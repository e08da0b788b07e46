import Foundation
import Hummingbird
import RescindProtocol
import RescindServiceSupport

/// Family members, their keys and grants, and ownership.
struct FamilyMemberController {
    let families: FamilyMemberStore
    let governance: GovernanceStore
    let checkIns: DeviceCheckIns

    func addRoutes(to group: RouterGroup<GrantRequestContext>) {
        group.post("family-members", use: create)
        group.get("family-members", use: list)
        group.get("family-members/:familyMemberID", use: get)
        group.get("family-members/:familyMemberID/fmk-version", use: version)
        group.get("family-members/:familyMemberID/key", use: key)
        group.get("family-members/:familyMemberID/key-statements", use: keyStatements)
        group.put("family-members/:familyMemberID/key", use: replaceKey)
        group.post("family-members/:familyMemberID/grants", use: grant)
        group.get("family-members/:familyMemberID/grants", use: grants)
        group.post("family-members/:familyMemberID/ownership", use: transfer)
    }

    @Sendable func create(_ request: Request, context: GrantRequestContext) async throws -> EditedResponse<FamilyMemberResponse> {
        let caller = try context.requireIdentity()
        let body = try await request.decode(as: CreateFamilyMemberRequest.self, context: context)
        try Validation.wrappedKey(body.wrappedFMK)
        return EditedResponse(status: .created, response: try await families.create(body, owner: caller.userID))
    }

    @Sendable func list(_ request: Request, context: GrantRequestContext) async throws -> FamilyMemberList {
        FamilyMemberList(familyMembers: try await families.list(for: try context.requireIdentity().userID))
    }

    @Sendable func get(_ request: Request, context: GrantRequestContext) async throws -> FamilyMemberResponse {
        try await families.get(try context.familyMemberID(), for: try context.requireIdentity().userID)
    }

    @Sendable func version(_ request: Request, context: GrantRequestContext) async throws -> FMKVersionResponse {
        let member = try await families.get(try context.familyMemberID(), for: try context.requireIdentity().userID)
        return FMKVersionResponse(familyMemberID: member.familyMemberID, currentFMKVersion: member.currentFMKVersion)
    }

    /// The caller's wrapped FMK; the device's check-in notes the version it was handed.
    @Sendable func key(_ request: Request, context: GrantRequestContext) async throws -> WrappedKeyResponse {
        let caller = try context.requireIdentity()
        let knownSeq = try request.uri.queryParameters.get("known_seq").map { try Self.sequence($0, "known_seq") } ?? 0
        let key = try await families.key(try context.familyMemberID(), for: caller.userID, knownSeq: knownSeq)
        await checkIns.keyFetched(key, by: caller, logger: context.logger)
        return key
    }

    /// The owner-signed key statements after `?after=N` (default 0), oldest first, at most 500.
    @Sendable func keyStatements(_ request: Request, context: GrantRequestContext) async throws -> KeyStatementList {
        let caller = try context.requireIdentity()
        let after = try request.uri.queryParameters.get("after").map { try Self.sequence($0, "after") } ?? 0
        return try await families.keyStatements(try context.familyMemberID(), for: caller.userID, after: after)
    }

    /// A statement sequence number from a query parameter: 0 … 2^31-1, or a 400 naming it.
    static func sequence(_ text: String, _ name: String) throws -> Int {
        guard let value = Int(text), (0...MessageLimits.maxInteger).contains(value) else {
            throw APIError.badRequest("\(name) must be an integer from 0 to \(MessageLimits.maxInteger)")
        }
        return value
    }

    @Sendable func replaceKey(_ request: Request, context: GrantRequestContext) async throws -> WrappedKeyResponse {
        let caller = try context.requireIdentity()
        let body = try await request.decode(as: ReplaceKeyRequest.self, context: context)
        try Validation.wrappedKey(body.wrappedFMK)
        if let granterKey = body.granterAgreementPublicKey { _ = try Validation.agreementKey(granterKey) }
        return try await families.replaceKey(try context.familyMemberID(), for: caller.userID, with: body)
    }

    @Sendable func grant(_ request: Request, context: GrantRequestContext) async throws -> EditedResponse<GrantResponse> {
        let caller = try context.requireIdentity()
        let body = try await request.decode(as: GrantRequest.self, context: context)
        try Validation.wrappedKey(body.wrappedFMK)
        return EditedResponse(
            status: .created, response: try await families.grant(try context.familyMemberID(), by: caller.userID, body))
    }

    @Sendable func grants(_ request: Request, context: GrantRequestContext) async throws -> GrantList {
        GrantList(grants: try await families.grants(try context.familyMemberID(), for: try context.requireIdentity().userID))
    }

    /// A governed operation: pending for the security delay unless a second device or the
    /// recovery key approves it (`GovernanceController`).
    @Sendable func transfer(_ request: Request, context: GrantRequestContext) async throws -> EditedResponse<GovernedOperation> {
        let caller = try context.requireIdentity()
        let body = try await request.decode(as: TransferOwnershipRequest.self, context: context)
        let transfer = OwnershipTransfer(familyMemberID: try context.familyMemberID(), newOwnerUserID: body.newOwnerUserID, statement: body.statement)
        return EditedResponse(status: .accepted, response: try await governance.beginTransfer(transfer, from: caller))
    }
}

extension GrantRequestContext {
    func familyMemberID() throws -> UUID { try uuidParameter("familyMemberID") }

    /// A path UUID, or a 400 naming the parameter.
    func uuidParameter(_ name: String) throws -> UUID {
        guard let text = parameters.get(name), let id = UUID(uuidString: text) else {
            throw APIError.badRequest("\(name) must be a UUID")
        }
        return id
    }
}
