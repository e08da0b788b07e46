import Foundation
import RescindProtocol

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One method per route of the grant service's OpenAPI document.
extension GrantServiceClient {
    // MARK: Identity

    public func serviceKey() async throws -> ServiceKeyResponse {
        try await send(.get, "v1/service-key", authenticated: false)
    }

    /// Whether `GET /ready` answers 200 (the service is up and reaches its database).
    /// - Throws: `GrantServiceError` when it cannot be reached or its URL is refused.
    public func isReady() async throws -> Bool {
        try await transport.send("GET", baseURL.appendingPathComponent("ready")).status == 200
    }

    public func registerUser(_ request: RegisterUserRequest) async throws -> UserResponse {
        try await send(.post, "v1/users", body: request, authenticated: false)
    }

    /// A single-use challenge for `registerDevice`, tied to this client's device.
    public func enrolmentChallenge() async throws -> ChallengeResponse {
        try await send(.post, "v1/enrolment-challenges", body: Empty())
    }

    /// Enrols another device of this user; `UserSession.addDevice` builds the signed request.
    public func registerDevice(_ request: EnrolDeviceRequest) async throws -> DeviceResponse {
        try await send(.post, "v1/devices", body: request)
    }

    public func devices() async throws -> [DeviceResponse] {
        try await send(.get, "v1/devices", as: DeviceList.self).devices
    }

    /// This device's own commands after position `after` (`DeviceCommandList`), oldest first.
    /// Each envelope must be verified as one read from Kafka before anything acts on it.
    public func deviceCommands(after: Int64, limit: Int = 100) async throws -> DeviceCommandList {
        try await send(
            .get, "v1/devices/self/commands",
            query: [URLQueryItem(name: "after", value: String(after)), URLQueryItem(name: "limit", value: String(limit))],
            as: DeviceCommandList.self)
    }

    public func retireDevice(_ deviceID: UUID) async throws {
        try await sendExpectingNoContent(.delete, "v1/devices/\(deviceID)")
    }

    public func me() async throws -> MeResponse {
        try await send(.get, "v1/me")
    }

    public func user(_ userID: UUID) async throws -> UserResponse {
        try await send(.get, "v1/users/\(userID)")
    }

    /// Begins replacing my identity keys (`IdentityRotation`): a governed operation, pending
    /// until the security delay runs out unless a second device or the recovery key approves it.
    public func rotateIdentity(_ rotation: IdentityRotation) async throws -> GovernedOperation {
        try await send(.post, "v1/identity-rotations", body: rotation)
    }

    // MARK: Governed operations

    /// My user's governed operations, newest first.
    public func governedOperations() async throws -> [GovernedOperation] {
        try await send(.get, "v1/governance/operations", as: GovernedOperationList.self).operations
    }

    /// Approves, from this second device, an operation another device of my user began: it takes
    /// effect now (a rotation at its floor, unless `deviceApproval`, this device's certified
    /// approval, makes two with the beginning device's).
    public func approveOperation(_ operationID: UUID, deviceApproval: DeviceApproval? = nil) async throws -> GovernedOperation {
        try await send(.post, "v1/governance/operations/\(operationID)/approve", body: GovernanceApproval(deviceApproval: deviceApproval))
    }

    /// Stores the recovery key's certificate of this device's key (`DeviceCertificate`); it also
    /// vouches for the device, which governs from its enrolment on.
    public func certifyDevice(_ certificate: DeviceCertificate) async throws {
        try await sendExpectingNoContent(.put, "v1/devices/\(certificate.deviceID)/certificate", body: certificate)
    }

    /// Vetoes an operation another device of my user began; that device is frozen.
    public func vetoOperation(_ operationID: UUID) async throws -> GovernedOperation {
        try await send(.post, "v1/governance/operations/\(operationID)/veto")
    }

    /// Withdraws an operation this device began.
    public func cancelOperation(_ operationID: UUID) async throws -> GovernedOperation {
        try await send(.post, "v1/governance/operations/\(operationID)/cancel")
    }

    /// Begins setting a new recovery key for my user (`RecoveryKeyChange`, signed by the new key):
    /// pending for the security delay unless approved.
    public func setRecoveryKey(_ change: RecoveryKeyChange) async throws -> GovernedOperation {
        try await send(.post, "v1/recovery-key", body: change)
    }

    /// Unfreezes another device of my user.
    public func clearDevice(_ deviceID: UUID) async throws {
        try await sendExpectingNoContent(.post, "v1/devices/\(deviceID)/clear")
    }

    /// A user's identity rotations, oldest first.
    public func identityRotations(of userID: UUID) async throws -> [IdentityRotation] {
        let list: IdentityRotationList = try await send(.get, "v1/users/\(userID)/identity-rotations")
        return list.rotations
    }

    // MARK: Family members and grants

    public func createFamilyMember(_ request: CreateFamilyMemberRequest) async throws -> FamilyMemberResponse {
        try await send(.post, "v1/family-members", body: request)
    }

    public func familyMembers() async throws -> [FamilyMemberResponse] {
        try await send(.get, "v1/family-members", as: FamilyMemberList.self).familyMembers
    }

    public func familyMember(_ id: UUID) async throws -> FamilyMemberResponse {
        try await send(.get, "v1/family-members/\(id)")
    }

    public func fmkVersion(_ id: UUID) async throws -> FMKVersionResponse {
        try await send(.get, "v1/family-members/\(id)/fmk-version")
    }

    /// My wrapped FMK; throws a 403 `GrantServiceError` once my access was revoked.
    public func wrappedKey(_ id: UUID, knownSeq: Int = 0) async throws -> WrappedKeyResponse {
        try await send(
            .get, "v1/family-members/\(id)/key",
            query: knownSeq > 0 ? [URLQueryItem(name: "known_seq", value: String(knownSeq))] : [])
    }

    /// The owner-signed key statements after `seq`, oldest first (at most 500 per answer).
    public func keyStatements(_ id: UUID, after seq: Int) async throws -> KeyStatementList {
        try await send(
            .get, "v1/family-members/\(id)/key-statements", query: [URLQueryItem(name: "after", value: String(seq))])
    }

    public func replaceKey(_ id: UUID, _ request: ReplaceKeyRequest) async throws -> WrappedKeyResponse {
        try await send(.put, "v1/family-members/\(id)/key", body: request)
    }

    public func grant(_ id: UUID, _ request: GrantRequest) async throws -> GrantResponse {
        try await send(.post, "v1/family-members/\(id)/grants", body: request)
    }

    public func grants(_ id: UUID) async throws -> [GrantResponse] {
        try await send(.get, "v1/family-members/\(id)/grants", as: GrantList.self).grants
    }

    /// Begins handing ownership to `newOwner`: a governed operation, pending until the security
    /// delay runs out unless a second device or the recovery key approves it.
    public func transferOwnership(_ id: UUID, to newOwner: UUID, statement: SignedKeyStatement?) async throws -> GovernedOperation {
        try await send(
            .post, "v1/family-members/\(id)/ownership", body: TransferOwnershipRequest(newOwnerUserID: newOwner, statement: statement))
    }

    // MARK: Records

    public func putRecord(_ familyMemberID: UUID, _ recordID: UUID, _ request: PutRecordRequest) async throws -> RecordResponse {
        try await send(.put, "v1/family-members/\(familyMemberID)/records/\(recordID)", body: request)
    }

    public func record(_ familyMemberID: UUID, _ recordID: UUID) async throws -> RecordResponse {
        try await send(.get, "v1/family-members/\(familyMemberID)/records/\(recordID)")
    }

    public func deleteRecord(_ familyMemberID: UUID, _ recordID: UUID) async throws {
        try await sendExpectingNoContent(.delete, "v1/family-members/\(familyMemberID)/records/\(recordID)")
    }

    /// One page of the change feed, moved in the binary record form (`BinaryRecords`).
    public func changes(_ familyMemberID: UUID, since cursor: Int64, limit: Int = 200) async throws -> RecordPage {
        let path = "v1/family-members/\(familyMemberID)/records"
        let response = try await sendRaw(
            .get, path,
            query: [URLQueryItem(name: "since", value: String(cursor)), URLQueryItem(name: "limit", value: String(limit))],
            body: nil, accept: BinaryRecords.mediaType, authenticated: true)
        return try decodeAnswer(of: path) {
            guard response.contentType?.hasPrefix(BinaryRecords.mediaType) == true else {
                return try CanonicalJSON.decode(RecordPage.self, from: response.body)
            }
            return try BinaryRecords.decodePage(response.body, familyMemberID: familyMemberID)
        }
    }

    /// The deleted and overwritten versions the family member keeps, newest first (the owner's alone).
    public func recordVersions(_ familyMemberID: UUID) async throws -> RecordVersionList {
        try await send(.get, "v1/family-members/\(familyMemberID)/record-versions")
    }

    /// Restores a kept version of a record (the latest, or `versionID`): the owner's alone.
    public func restoreRecord(_ familyMemberID: UUID, _ recordID: UUID, version versionID: UUID? = nil) async throws -> RecordResponse {
        try await send(
            .post, "v1/family-members/\(familyMemberID)/records/\(recordID)/restore", body: RestoreRecordRequest(versionID: versionID))
    }

    // MARK: Revocation

    /// What revoking `user` from the family member would do, changing nothing (the owner's alone).
    public func revocationPreview(_ familyMemberID: UUID, user: UUID) async throws -> RevocationPreview {
        try await send(
            .get, "v1/family-members/\(familyMemberID)/revocation-preview",
            query: [URLQueryItem(name: "user", value: user.uuidString.lowercased())])
    }

    public func beginRevocation(_ familyMemberID: UUID, _ request: BeginRevocationRequest) async throws -> RevocationResponse {
        try await send(.post, "v1/family-members/\(familyMemberID)/revocations", body: request)
    }

    /// Begins a rotation that revokes nobody (continued as a revocation: upload, commit, abandon).
    public func beginRotation(_ familyMemberID: UUID, _ request: BeginRotationRequest) async throws -> RevocationResponse {
        try await send(.post, "v1/family-members/\(familyMemberID)/rotations", body: request)
    }

    public func beginUserRevocation(_ userID: UUID, _ request: BeginUserRevocationRequest) async throws -> [RevocationResponse] {
        try await send(.post, "v1/users/\(userID)/revocations", body: request, as: RevocationList.self).revocations
    }

    /// Stages re-encrypted records, sent in the binary record form (`BinaryRecords`).
    public func uploadRevocationBatch(_ revocationID: UUID, _ records: [StagedRecord]) async throws -> UploadBatchResponse {
        try await uploadRevocationBatch(revocationID, body: BinaryRecords.encode(UploadBatchRequest(records: records)))
    }

    /// Stages a batch already encoded, e.g. sealed straight into its body (`RecordCipher.resealIntoBatches`).
    public func uploadRevocationBatch(_ revocationID: UUID, _ batch: BinaryRecords.UploadBatchWriter) async throws -> UploadBatchResponse {
        try await uploadRevocationBatch(revocationID, body: Data(batch.body))
    }

    private func uploadRevocationBatch(_ revocationID: UUID, body: Data) async throws -> UploadBatchResponse {
        let path = "v1/revocations/\(revocationID)/records"
        let response = try await sendRaw(
            .put, path, query: [], body: body, contentType: BinaryRecords.mediaType, authenticated: true)
        return try decodeAnswer(of: path) { try CanonicalJSON.decode(UploadBatchResponse.self, from: response.body) }
    }

    /// Stages re-encrypted kept versions (restorable records) of a revocation in progress.
    public func uploadRevocationVersions(_ revocationID: UUID, _ versions: [StagedRecordVersion]) async throws -> UploadVersionsResponse {
        try await send(.put, "v1/revocations/\(revocationID)/versions", body: UploadVersionsRequest(versions: versions))
    }

    public func commitRevocation(_ revocationID: UUID, _ request: CommitRevocationRequest) async throws -> RevocationCommitted {
        try await send(.post, "v1/revocations/\(revocationID)/commit", body: request)
    }

    public func abandonRevocation(_ revocationID: UUID) async throws {
        try await sendExpectingNoContent(.delete, "v1/revocations/\(revocationID)")
    }
}
