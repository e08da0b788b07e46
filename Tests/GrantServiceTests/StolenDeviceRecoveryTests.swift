import Foundation
import RescindCrypto
import RescindProtocol
import RescindTestSupport
import Synchronization
import Testing

@testable import RescindClient

/// The owner's stolen-device flow: revoke everywhere, wait for the user's rotation, compare
/// codes, re-grant — resumable after a failure at any step, and never to the thief's keys.
@Suite(.serialized) struct StolenDeviceRecoveryTests {
    struct Crash: Error {}

    @Test func aRecoveryInterruptedHalfWayResumesAndFinishes() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 3)
            let a = home.adultA
            let (liam, liamFMK) = try await a.createFamilyMember()
            _ = try await a.putRecord(liam, plaintext: Array("liam".utf8), fmk: liamFMK, version: 1)
            try await a.grant(liam, to: home.adultB.keys.userID)
            let phone = home.adultB
            let laptop = try await phone.addDevice(name: "Adult B's laptop")

            // First run: dies right after the first revocation committed and the plan said so.
            var plan = try await a.beginStolenDeviceRecovery(user: phone.keys.userID, reason: "phone stolen")
            let file = Mutex<StolenDeviceRecovery?>(nil)
            await #expect(throws: Crash.self) {
                _ = try await a.advance(&plan) { recorded in
                    file.withLock { $0 = recorded }
                    if recorded.revoked.count == 1 { throw Crash() }
                }
            }
            var saved = try #require(file.withLock { $0 })
            #expect(saved.familyMembers.count == 2 && saved.revoked.count == 1 && saved.openRevocations.count == 1)

            // Second run: finishes the revocations, then waits for B's rotation.
            let second = try await a.advance(&saved) { _ in }
            #expect(second.contains { if case .revoked = $0 { true } else { false } })
            #expect(second.last == .waitingForRotation(generation: 1))
            #expect(try await service.count("SELECT count(*) FROM revocation_events") == 2, "each family member revoked once")
            #expect(try await service.count("SELECT count(*) FROM revocation_stagings") == 0, "nothing left staged")
            for member in [home.emma, liam] {
                await expectFailure(403, "access_revoked") { try await laptop.client.wrappedKey(member) }
            }

            // B retires the phone and rotates from the laptop.
            try await laptop.client.retireDevice(phone.deviceID)
            let rotated = try await IdentityRotationTests.rotate(laptop)
            let third = try await a.advance(&saved) { _ in }
            guard case .confirmNewKeys(2, let code)? = third.last else { Issue.record("\(third)"); return }
            // B's own device shows the same code for A: A confirms, and the re-grants go through.
            let shownByB = try rotated.keys.agreementKey.verificationCode(
                with: try X25519.PublicKey(rawRepresentation: [UInt8](try await rotated.client.user(a.keys.userID).agreementPublicKey)))
            #expect(shownByB == code)
            await expectFailure(401, "device_retired") { try await phone.client.wrappedKey(home.emma) }
            let fourth = try await a.advance(&saved, confirmedCode: code) { _ in }
            #expect(fourth.filter { if case .regranted = $0 { true } else { false } }.count == 2)
            #expect(saved.isFinished)
            #expect(try await rotated.readRecords(home.emma).count == 3)
            #expect(try await rotated.readRecords(liam).count == 1)
            // Running it once more does nothing.
            #expect(try await a.advance(&saved, confirmedCode: code) { _ in }.isEmpty)
        }
    }

    /// The thief, holding the phone's keys and a live token, rotates B's identity first to keys
    /// of their own. The generation moves on, but the code A sees is not the one B's device
    /// shows, so A does not re-grant — and B's own rotation is now refused, which tells B.
    @Test func aThiefWhoRotatesFirstIsNotReGranted() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 1)
            let a = home.adultA
            let phone = home.adultB
            let laptop = try await phone.addDevice(name: "Adult B's laptop")
            var plan = try await a.beginStolenDeviceRecovery(user: phone.keys.userID, reason: "phone stolen")
            _ = try await a.advance(&plan) { _ in }

            let thiefKeys = UserKeys.generate(userID: phone.keys.userID)
            // Nobody vetoes the thief's rotation (the worst case): the delay runs out and it takes effect.
            _ = try await phone.registerRotation(to: thiefKeys, currentGeneration: 1)
            #expect(try await service.elapseSecurityDelay(of: phone.keys.userID, listingWith: laptop).first?.state == .applied)
            let steps = try await a.advance(&plan) { _ in }
            guard case .confirmNewKeys(2, let seenByA)? = steps.last else { Issue.record("\(steps)"); return }
            let shownByB = try laptop.keys.agreementKey.verificationCode(
                with: try X25519.PublicKey(rawRepresentation: [UInt8](a.keys.agreementKey.publicKey.rawRepresentation)))
            #expect(shownByB != seenByA)
            let refused = try await a.advance(&plan, confirmedCode: shownByB) { _ in }
            #expect(refused.last == .confirmNewKeys(generation: 2, verificationCode: seenByA))
            #expect(plan.regranted.isEmpty)
            await expectFailure(403, "access_revoked") { try await phone.client.wrappedKey(home.emma) }
            await expectFailure(409, "stale_rotation") {
                try await laptop.registerRotation(to: UserKeys.generate(userID: phone.keys.userID), currentGeneration: 1)
            }
        }
    }

    /// B's only phone was stolen: B cannot rotate (no device holds the old identity key), so B
    /// registers a new identity, and A re-grants it after comparing its code. The stolen
    /// identity gets nothing; a wrong code re-grants nothing.
    @Test func aUserWhoLostEveryDeviceIsReGrantedUnderANewIdentity() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 2)
            let a = home.adultA
            let stolen = home.adultB
            let newB = try await service.user("Adult B (new phone)")
            await #expect(throws: StolenDeviceRecovery.Refusal.self) {
                _ = try await a.beginStolenDeviceRecovery(user: stolen.keys.userID, regrantTo: stolen.keys.userID, reason: nil)
            }
            var plan = try await a.beginStolenDeviceRecovery(user: stolen.keys.userID, regrantTo: newB.keys.userID, reason: "only phone stolen")
            let steps = try await a.advance(&plan) { _ in }
            guard case .confirmNewKeys(_, let code)? = steps.last else { Issue.record("\(steps)"); return }
            let shownByNewB = try newB.keys.agreementKey.verificationCode(
                with: try X25519.PublicKey(rawRepresentation: [UInt8](a.keys.agreementKey.publicKey.rawRepresentation)))
            #expect(shownByNewB == code)
            _ = try await a.advance(&plan, confirmedCode: "00-00-00") { _ in }
            #expect(plan.regranted.isEmpty)
            _ = try await a.advance(&plan, confirmedCode: code) { _ in }
            #expect(plan.isFinished)
            #expect(try await newB.readRecords(home.emma).count == 2)
            await expectFailure(403, "access_revoked") { try await stolen.client.wrappedKey(home.emma) }
        }
    }
}
