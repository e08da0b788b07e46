import Foundation
import RescindProtocol

/// A key history this client refused: the key was not used and what was held is kept. The
/// refusal is reported (`KeyChainViolationReporting`), which says so itself when it cannot be.
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
            + "Nothing was used or changed; the grant service may be compromised."
    }
}
