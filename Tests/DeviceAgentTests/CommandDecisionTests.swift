import Foundation
import RescindProtocol
import Testing

@testable import DeviceAgent

@Suite("Command decisions: idempotency and the version floor (pure)")
struct CommandDecisionTests {
    let member = UUID()

    func command(_ action: DeviceAction, _ version: Int) -> DeviceCommand {
        DeviceCommand(
            commandID: UUID(), eventID: UUID(), deviceID: UUID(), action: action, familyMemberID: member,
            newFMKVersion: version, issuedAt: Date())
    }

    func state(_ status: FamilyMemberState.Status, version: Int, floor: Int) -> FamilyMemberState {
        FamilyMemberState(
            familyMemberID: member, status: status, fmkVersion: version, versionFloor: floor,
            wrappedFMK: status == .active ? Data(count: 40) : nil)
    }

    @Test("rotation goes to at least the commanded version, from nothing or an older one")
    func rotate() throws {
        #expect(CommandDecision.decide(command(.fmkRotation, 2), local: nil) == .rotate(minimum: 2))
        #expect(CommandDecision.decide(command(.fmkRotation, 3), local: state(.active, version: 2, floor: 2)) == .rotate(minimum: 3))
    }

    @Test("a rotation to a version held or passed is already applied")
    func rotationAlreadyApplied() throws {
        for version in [1, 2] {
            guard case .alreadyApplied = CommandDecision.decide(command(.fmkRotation, version), local: state(.active, version: 2, floor: 2))
            else { Issue.record("v\(version) should be already applied"); continue }
        }
        guard case .alreadyApplied = CommandDecision.decide(command(.fmkRotation, 3), local: state(.revoked, version: 0, floor: 4))
        else { Issue.record("below the floor of an erased member"); return }
    }

    @Test("secure deletion erases what is held below its version, and raises the floor")
    func erase() throws {
        #expect(CommandDecision.decide(command(.secureDeletion, 2), local: state(.active, version: 1, floor: 1)) == .erase(floor: 2))
        #expect(CommandDecision.decide(command(.secureDeletion, 2), local: nil) == .erase(floor: 2))
    }

    @Test("secure deletion never erases a version granted after it, nor erases twice")
    func eraseAlreadyApplied() throws {
        guard case .alreadyApplied = CommandDecision.decide(command(.secureDeletion, 2), local: state(.active, version: 2, floor: 2))
        else { Issue.record("re-granted at v2: stale erasure must not apply"); return }
        guard case .alreadyApplied = CommandDecision.decide(command(.secureDeletion, 2), local: state(.revoked, version: 0, floor: 2))
        else { Issue.record("already erased"); return }
    }
}
