import Foundation
import RescindProtocol

/// A key history this client refused: the key was not used, what was held is kept, and the
/// refusal was reported (`KeyChainViolationReporting`).
public struct KeyHistoryError: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: KeyChainViolation.Code
    public var familyMemberID: UUID
    /// The statement that failed, when one did.
    public var statementSeq: Int?
    public var detail: String

    public init(_ code: KeyChainViolation.Code, familyMemberID: UUID, statementSeq: Int? = nil, _ detail: String) {
        self.code = code
        self.familyMemberID = familyMemberID
        self.statementSeq = statementSeq
        self.detail = detail
    }

    public var description: String {
        let what = code == .unverifiedRecipientKey ? "refused a recipient key for" : "refused the key history of"
        return "\(what) family member \(familyMemberID.uuidString.lowercased()) (\(code.rawValue)): \(detail). "
            + "Nothing was changed and it was reported; the grant service may be compromised."
    }
}
