import Foundation
import RescindClient
import RescindTestSupport

/// The set-up the crash, healing and process tests share: a family member of "Adult A"
/// with records, shared with "Adult B", who keeps access (their device rotates on the
/// revocation), and with "Adult C", who is then revoked (their device erases); B and C
/// each have an agent enrolled as a new device.
struct RevocationScenario {
    let owner: UserSession
    let keptUser: UserSession
    let revokedUser: UserSession
    let member: (id: UUID, rawFMK: [UInt8], records: [UUID: [UInt8]])
    /// Adult B's agent device.
    let kept: AgentTestKit.Device
    /// Adult C's agent device.
    let revoked: AgentTestKit.Device

    /// Runs `body` with a fresh scenario on a fresh grant service (`GrantServiceHarness.with`)
    /// and always removes both devices' data. With `interactiveRegistrations`, the devices the
    /// three users registered with are interactive (no agent runs on them), so the revocation
    /// expects only the two agents and can complete.
    static func with<Result>(
        interactiveRegistrations: Bool = false, records: [String],
        _ body: (GrantServiceHarness, RevocationScenario) async throws -> Result
    ) async throws -> Result {
        try await GrantServiceHarness.with { service in
            func user(_ name: String) async throws -> UserSession {
                guard interactiveRegistrations else { return try await service.user(name) }
                return try await UserSession.register(
                    keys: .generate(), displayName: name, deviceName: "\(name)'s CLI", deviceRole: .interactive,
                    baseURL: service.baseURL, tls: service.clientTLS)
            }
            let owner = try await user("Adult A")
            let keptUser = try await user("Adult B")
            let revokedUser = try await user("Adult C")
            let member = try await AgentTestKit.familyMember(ownedBy: owner, records: records)
            try await owner.grant(member.id, to: keptUser.keys.userID)
            try await owner.grant(member.id, to: revokedUser.keys.userID)
            let kept = try await AgentTestKit.enrol(keptUser, on: service, name: "kept")
            defer { kept.directory.remove() }
            let revoked = try await AgentTestKit.enrol(revokedUser, on: service, name: "revoked")
            defer { revoked.directory.remove() }
            let scenario = RevocationScenario(
                owner: owner, keptUser: keptUser, revokedUser: revokedUser, member: member, kept: kept, revoked: revoked)
            return try await body(service, scenario)
        }
    }

    /// The revocation under test: Adult C loses access, so the grant service commands the
    /// kept device to rotate and the revoked one to erase.
    func revoke() async throws {
        _ = try await owner.revoke(member.id, user: revokedUser.keys.userID)
    }
}
