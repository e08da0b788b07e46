import Hummingbird
import RescindProtocol

// The shared API types are encoded by Hummingbird as responses of this service.
extension UserResponse: ResponseEncodable {}
extension DeviceResponse: ResponseEncodable {}
extension DeviceList: ResponseEncodable {}
extension DeviceCommandList: ResponseEncodable {}
extension MeResponse: ResponseEncodable {}
extension KeyBackup: ResponseEncodable {}
extension ChallengeResponse: ResponseEncodable {}
extension TokenResponse: ResponseEncodable {}
extension FamilyMemberResponse: ResponseEncodable {}
extension FamilyMemberList: ResponseEncodable {}
extension FMKVersionResponse: ResponseEncodable {}
extension WrappedKeyResponse: ResponseEncodable {}
extension GrantResponse: ResponseEncodable {}
extension GrantList: ResponseEncodable {}
extension KeyStatementList: ResponseEncodable {}
extension RecordResponse: ResponseEncodable {}
extension RecordPage: ResponseEncodable {}
extension RecordVersionList: ResponseEncodable {}
extension UploadVersionsResponse: ResponseEncodable {}
extension RevocationResponse: ResponseEncodable {}
extension RevocationList: ResponseEncodable {}
extension UploadBatchResponse: ResponseEncodable {}
extension RevocationCommitted: ResponseEncodable {}
extension RevocationPreview: ResponseEncodable {}
extension ServiceKeyResponse: ResponseEncodable {}
extension IdentityRotationList: ResponseEncodable {}
extension InvitationResponse: ResponseEncodable {}
extension RecoveryActionResult: ResponseEncodable {}
extension GovernedOperation: ResponseEncodable {}
extension GovernedOperationList: ResponseEncodable {}
