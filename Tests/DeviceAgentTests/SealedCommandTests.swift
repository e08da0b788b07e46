import Foundation
import RescindClient
import RescindCrypto
import RescindProtocol
import Testing

@testable import DeviceAgent

@Suite struct SealedCommandTests {
    let inbox = X25519.PrivateKey()
    let entry = SealedCommand(
        command: DeviceCommand(
            commandID: UUID(uuidString: "00000000-0000-0000-0000-0000000000C1")!,
            eventID: UUID(uuidString: "00000000-0000-0000-0000-0000000000E1")!,
            deviceID: UUID(uuidString: "00000000-0000-0000-0000-0000000000D1")!,
            action: .secureDeletion,
            familyMemberID: UUID(uuidString: "00000000-0000-0000-0000-0000000000F1")!,
            newFMKVersion: 2,
            issuedAt: Date(timeIntervalSince1970: 1_737_385_200)),
        result: .init(
            outcome: .applied, recordsProcessed: 3, fmkVersion: 2, durationMs: 12, error: nil,
            completedAt: Date(timeIntervalSince1970: 1_737_385_201)))

    @Test func anEntryOpensAsItWasSealed() throws {
        #expect(try SealedCommand.open(try entry.sealed(to: inbox.publicKey), with: inbox) == entry)
    }

    @Test func anEntryDoesNotOpenWithAnotherInboxKey() throws {
        #expect(throws: AgentError.self) { try SealedCommand.open(try entry.sealed(to: inbox.publicKey), with: X25519.PrivateKey()) }
    }

    /// Sealed by an agent from before the one JSON form, then opened by this one after an upgrade.
    @Test func anEntrySealedInTheEarlierFormStillOpens() throws {
        let earlier = """
            {"command":{"command_id":"00000000-0000-0000-0000-0000000000C1","event_id":"00000000-0000-0000-0000-0000000000E1",\
            "device_id":"00000000-0000-0000-0000-0000000000D1","type":"secure_deletion",\
            "family_member_id":"00000000-0000-0000-0000-0000000000F1","new_fmk_version":2,"issued_at":1737385200},\
            "result":{"outcome":"applied","recordsProcessed":3,"fmkVersion":2,"durationMs":12,"completedAt":1737385201}}
            """
        let sealed = Data(try AnonymousSealedBox.seal(Array(earlier.utf8), to: inbox.publicKey))
        #expect(try SealedCommand.open(sealed, with: inbox) == entry)
    }
}
