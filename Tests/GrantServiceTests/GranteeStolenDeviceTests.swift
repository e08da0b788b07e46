import Foundation
import RescindCrypto
import RescindProtocol
import RescindTestSupport
import Testing

@testable import GrantService
@testable import RescindClient

/// A thief holds a copy of a *grantee's* unlocked phone (Adult B, who reads Emma, Adult A's
/// family member) and acts first: it begins rotating B's identity and enrols a device of its
/// own. Nothing it begins takes effect before the delay; each step is announced at once to B's
/// laptop and to A's devices; B's laptop vetoes, and retiring the phone takes the thief's
/// enrolled device with it. A revokes B at once, as A's devices were told.
@Suite(.serialized) struct GranteeStolenDeviceTests {
    @Test func theThiefWithAGranteesPhoneIsHeardVetoedAndLeavesNothingBehind() async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await service.user("Adult A")
            let phone = try await service.user("Adult B")  // the device the thief copied
            let laptop = try await phone.addDevice(name: "Adult B's laptop", kind: .laptop, role: .interactive)
            try await service.ageEnrolments(of: phone.keys.userID)  // the laptop is months old
            let (emma, fmk) = try await owner.createFamilyMember()
            _ = try await owner.putRecord(emma, plaintext: Array("blood type O+".utf8), fmk: fmk, version: 1)
            try await owner.grant(emma, to: phone.keys.userID)
            let b = phone.keys.userID

            // The thief moves first: a rotation of B's identity (pending), a device of its own.
            let rotation = try await phone.registerRotation(to: UserKeys.generate(userID: b), currentGeneration: 1)
            #expect(rotation.state == .pending)
            let tablet = try await phone.addDevice(name: "thief's tablet", kind: .tablet)
            // The tablet works at once (reading is a device's: the phone reads as much), but governs nothing.
            #expect(try await tablet.readRecords(emma).count == 1)
            await expectFailure(403, "not_a_second_device") { try await tablet.client.approveOperation(rotation.operationID) }

            // Both are announced at once: to B's laptop, and to A's phone as B's owner.
            let notices = try await GovernanceAnnouncementTests.heard(.deviceCommands, count: 6, on: service)
            func heard(_ device: UUID, _ change: GovernanceNotice.Change) -> GovernanceNotice? {
                notices.first {
                    $0.deviceID == device && $0.change == change && $0.userID == b
                        && (change != .enrolDevice || $0.subjectDeviceID == tablet.deviceID)
                }
            }
            #expect(heard(laptop.deviceID, .rotateIdentity)?.state == .pending)
            #expect(heard(owner.deviceID, .rotateIdentity)?.audience == .owner)
            let enrolment = try #require(heard(laptop.deviceID, .enrolDevice))
            #expect(enrolment.subjectDeviceID == tablet.deviceID && enrolment.actorDeviceID == phone.deviceID)
            #expect(try #require(enrolment.effectiveAt) > Date().addingTimeInterval(23 * 3600))
            #expect(heard(owner.deviceID, .enrolDevice)?.audience == .owner)
            #expect(heard(tablet.deviceID, .enrolDevice) != nil)  // the new device hears of its own enrolment

            // B's laptop vetoes the rotation; the frozen phone can neither veto the laptop's
            // decisions nor begin again.
            _ = try await laptop.client.vetoOperation(rotation.operationID)
            await expectFailure(403, "device_frozen") { try await phone.client.vetoOperation(rotation.operationID) }
            await expectFailure(403, "device_frozen") {
                try await phone.registerRotation(to: UserKeys.generate(userID: b), currentGeneration: 1)
            }
            await expectFailure(403, "device_frozen") { try await phone.client.retireDevice(laptop.deviceID) }

            // The laptop retires the phone: the thief's tablet, still provisional, goes with it.
            try await laptop.client.retireDevice(phone.deviceID)
            await expectFailure(401) { try await tablet.client.me() }
            await expectFailure(401) { try await phone.client.me() }
            let devices = try await laptop.client.devices()
            #expect(devices.first { $0.deviceID == tablet.deviceID }?.retiredAt != nil)
            #expect(devices.first { $0.deviceID == laptop.deviceID }?.retiredAt == nil)

            // The delay runs out: the vetoed rotation never applies; B is still B.
            let after = try await service.elapseSecurityDelay(of: b, listingWith: laptop)
            #expect(after.first { $0.operationID == rotation.operationID }?.state == .vetoed)
            #expect(try await owner.client.user(b).identityGeneration == 1)

            // A, told of all of it on A's devices, revokes B at once: Emma moves to a new FMK.
            let committed = try await owner.revoke(emma, user: b, reason: "B's phone stolen")
            #expect(committed.newFMKVersion == 2)
        }
    }

    /// Retiring a provisional device is a veto of its enrolment: the device that enrolled it is
    /// frozen. A device that has governed (its delay ran out unvetoed) no longer follows its enroller.
    @Test func retiringAProvisionalDeviceFreezesItsEnrollerAndAnEstablishedOneOutlivesIt() async throws {
        try await GrantServiceHarness.with { service in
            let phone = try await service.user("Adult A")
            let iPad = try await phone.addDevice(name: "Adult A's iPad", kind: .tablet)
            try await service.ageEnrolments(of: phone.keys.userID)  // the iPad is established
            let rogue = try await phone.addDevice(name: "rogue")
            try await iPad.client.retireDevice(rogue.deviceID)
            await expectFailure(403, "device_frozen") { try await phone.addDevice(name: "another rogue") }
            await expectFailure(403, "device_frozen") { try await phone.client.retireDevice(iPad.deviceID) }

            // The recovery key clears the phone; retiring the phone then leaves the established iPad.
            let recovery = try TestRecovery.key(for: phone.keys.userID)
            try await recovery.order(.clear, for: phone.keys.userID, deviceID: phone.deviceID, through: iPad.client)
            try await iPad.client.retireDevice(phone.deviceID)
            #expect(try await iPad.client.devices().first { $0.deviceID == iPad.deviceID }?.retiredAt == nil)
        }
    }
}
