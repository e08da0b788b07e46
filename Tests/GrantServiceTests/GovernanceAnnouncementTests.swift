import Foundation
import RescindCrypto
import RescindProtocol
import RescindTestSupport
import Testing

@testable import GrantService
@testable import RescindClient

/// Every change to who a user is, pending or decided, is announced in the transaction that
/// makes it: a signed `GovernanceNotice` on `device_commands` for each device that must hear of
/// it, and one on `access_events` for the audit service. The thief cannot begin anything the
/// owner's other devices, or the owners who share with a grantee, do not hear of.
@Suite(.serialized) struct GovernanceAnnouncementTests {
    /// A notice as one device received it (`device`, `audience`), or as the audit service did (both nil).
    struct Heard: Hashable, CustomStringConvertible {
        let device: UUID?
        let audience: GovernanceNotice.Audience?
        let user: UUID
        let change: GovernanceNotice.Change
        let state: GovernedOperation.State

        var description: String { "\(device.map { String($0.uuidString.prefix(8)) } ?? "audit") \(audience?.rawValue ?? "-") \(change.rawValue) \(state.rawValue)" }
    }

    /// Every notice published on a topic, verified with the service's key and against the schema.
    static func heard(_ topic: Topic, count: Int, on service: GrantServiceHarness) async throws -> [GovernanceNotice] {
        let validator = try JSONSchemaValidator.load(GovernanceNotice.schema)
        return try await service.messages(topic, count: count, governance: true).map { message in
            let value = try #require(message.value)
            #expect(try validator.problems(value).isEmpty)
            let notice = try SignedMessage<GovernanceNotice>.verified(from: value, schema: GovernanceNotice.schema, key: service.serviceKey).payload
            // Keyed by the device it is addressed to, or by the user for the audit service.
            #expect(message.key.map { String(decoding: $0, as: UTF8.self) } == (notice.deviceID ?? notice.userID).uuidString.lowercased())
            return notice
        }
    }

    @Test func theThiefsRotationIsAnnouncedToTheOwnersOtherDevicesAndAGranteesToTheOwner() async throws {
        try await GrantServiceHarness.with { service in
            // Adult A: a phone (the thief's) and an iPad; Emma shared with Adult B.
            let owner = try await GovernedOperationTests.owner(on: service)
            let (a, b) = (owner.userID, owner.grantee.keys.userID)
            let (phone, iPad) = (owner.phone.deviceID, owner.iPad.deviceID)

            // The thief begins a rotation of A; B (a grantee of A's) begins one too.
            let thiefs = try await owner.phone.registerRotation(to: UserKeys.generate(userID: a), currentGeneration: 1)
            let bs = try await owner.grantee.registerRotation(to: UserKeys.generate(userID: b), currentGeneration: 1)
            // The iPad vetoes the thief's, then retires the phone.
            _ = try await owner.iPad.client.vetoOperation(thiefs.operationID)
            try await owner.iPad.client.retireDevice(phone)

            let expected: [Heard] = [
                // The iPad's enrolment, by the phone: the new device hears of it (A shares with no one as a grantee).
                Heard(device: iPad, audience: .user, user: a, change: .enrolDevice, state: .applied),
                // The thief's rotation: the iPad, not the phone that began it.
                Heard(device: iPad, audience: .user, user: a, change: .rotateIdentity, state: .pending),
                // B's rotation: B has no other device; A's devices hear of it as B's owner.
                Heard(device: phone, audience: .owner, user: b, change: .rotateIdentity, state: .pending),
                Heard(device: iPad, audience: .owner, user: b, change: .rotateIdentity, state: .pending),
                // The veto: every device of A, the deciding one too.
                Heard(device: phone, audience: .user, user: a, change: .rotateIdentity, state: .vetoed),
                Heard(device: iPad, audience: .user, user: a, change: .rotateIdentity, state: .vetoed),
                // The retirement: the retired phone hears of its own.
                Heard(device: phone, audience: .user, user: a, change: .retireDevice, state: .applied),
            ]
            let addressed = try await Self.heard(.deviceCommands, count: expected.count, on: service)
            let heard = addressed.map { Heard(device: $0.deviceID, audience: $0.audience, user: $0.userID, change: $0.change, state: $0.state) }
            #expect(Set(heard) == Set(expected), "\(heard)")
            #expect(heard.count == expected.count)

            // What the notices say: the operation, who began it, when it takes effect; the
            // retired device; nothing else (no key material: the schema allows none).
            let pending = try #require(addressed.first { $0.deviceID == iPad && $0.state == .pending && $0.userID == a })
            #expect(pending.operationID == thiefs.operationID && pending.actorDeviceID == phone)
            #expect(pending.effectiveAt == thiefs.effectiveAt)
            let vetoed = try #require(addressed.first { $0.deviceID == phone && $0.state == .vetoed })
            #expect(vetoed.actorDeviceID == iPad && vetoed.decidedBy == .device)
            let retired = try #require(addressed.first { $0.change == .retireDevice })
            #expect(retired.subjectDeviceID == phone && retired.actorDeviceID == iPad)
            #expect(addressed.first { $0.userID == b }?.operationID == bs.operationID)

            // Retiring the retired phone again changes nothing and is not announced again; the
            // iPad's next enrolment is (A's notices share a partition: the order holds).
            try await owner.iPad.client.retireDevice(phone)
            let laptop = try await owner.iPad.addDevice(name: "Adult A's laptop")

            // The audit service's copies: one per announcement, with no addressee.
            let audited = try await Self.heard(.accessEvents, count: 6, on: service)
            #expect(audited.allSatisfy { $0.deviceID == nil && $0.audience == nil })
            #expect(
                Set(audited.map { "\($0.change.rawValue) \($0.state.rawValue)" })
                    == ["enrol_device applied", "rotate_identity pending", "rotate_identity vetoed", "retire_device applied"])
            #expect(audited.filter { $0.change == .retireDevice }.count == 1)
            #expect(audited.contains { $0.change == .enrolDevice && $0.subjectDeviceID == laptop.deviceID })
            #expect(Set(audited.map(\.noticeID)).count == 6)
        }
    }

    @Test func aTransferAndItsWithdrawalAtTheThiefsRetirementAreAnnounced() async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await GovernedOperationTests.owner(on: service)
            let accomplice = try await service.user("Accomplice")
            try await owner.phone.grant(owner.emma, to: accomplice.keys.userID)  // a transfer goes to a holder
            let begun = try await owner.phone.transferOwnership(owner.emma, to: accomplice.keys.userID)
            #expect(begun.state == .pending)
            try await owner.iPad.client.retireDevice(owner.phone.deviceID)

            // The iPad hears of the transfer, then of its withdrawal; the phone of its retirement.
            let addressed = try await Self.heard(.deviceCommands, count: 4, on: service)
            let transfer = addressed.filter { $0.change == .transferOwnership && $0.deviceID == owner.iPad.deviceID }
            #expect(transfer.map(\.state).sorted { $0.rawValue < $1.rawValue } == [.pending, .withdrawn], "\(addressed)")
            #expect(transfer.allSatisfy { $0.familyMemberID == owner.emma && $0.operationID == begun.operationID })
            #expect(transfer.first { $0.state == .withdrawn }?.decidedBy == .retirement)
            // The grantee B and the accomplice hear nothing of A's transfer: it is A's to stop.
            #expect(!addressed.contains { $0.deviceID == owner.grantee.deviceID || $0.deviceID == accomplice.deviceID })
        }
    }
}
