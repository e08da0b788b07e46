import Foundation
import RescindPostgres
import RescindServiceSupport

/// What a monitoring caller may see: everything (the operator), or the family members a
/// user currently owns (as the latest event names the owner).
enum MonitoringScope: Sendable, Equatable {
    case `operator`
    case owner(UUID)

    /// The owner to filter by, `nil` for the operator.
    var ownerUserID: UUID? {
        if case .owner(let id) = self { return id }
        return nil
    }

    /// Operator-only data (rejected messages, whose origin may be anyone's).
    func requireOperator() throws {
        guard self == .operator else { throw APIError.operatorOnly }
    }

    /// A filter on one family member: the operator may ask for any; an owner only for their
    /// own (403 for another's, 404 for one the audit service has never heard of).
    func requireAccess(to familyMemberID: UUID, on connection: PostgresConnection) async throws {
        guard let ownerUserID else { return }
        let owner = try await connection.query(
            "SELECT owner_user_id FROM family_members WHERE family_member_id = \(familyMemberID)"
        ).first?.decode(UUID.self, column: 0)
        guard let owner else { throw APIError.notFound("family member") }
        guard owner == ownerUserID else { throw APIError.notYourFamilyMember }
    }
}
