import Foundation
import RescindClient
import RescindCrypto
import RescindProtocol
import RescindTestSupport
import Testing

/// `GET /v1/devices/self/commands`: the grant service keeps each signed command it sent a device
/// and serves it to that device only, for a device that missed it on the topic.
@Suite struct DeviceCommandListTests {
    @Test func eachDeviceGetsItsOwnSignedCommandsAfterItsCursorAndNoOneElses() async throws {
        try await GrantServiceHarness.with { grant in
            let adultA = try await grant.user("Adult A"), adultB = try await grant.user("Adult B")
            let adultC = try await grant.user("Adult C")
            let (emma, fmk) = try await adultA.createFamilyMember()
            _ = try await adultA.putRecord(emma, plaintext: Array("record".utf8), fmk: fmk, version: 1)
            _ = try await adultA.grant(emma, to: adultB.keys.userID)
            _ = try await adultA.grant(emma, to: adultC.keys.userID)
            let committed = try await adultA.revoke(emma, user: adultC.keys.userID)

            let key = grant.serviceKey
            for (session, action) in [(adultB, DeviceAction.fmkRotation), (adultC, .secureDeletion)] {
                let list = try await session.client.deviceCommands(after: 0)
                #expect(list.commands.count == 1)
                let entry = try #require(list.commands.first)
                // The very envelope published on device_commands, verified as the agent does.
                let command = try SignedMessage<DeviceCommand>.verified(from: entry.envelope, schema: DeviceCommand.schema, key: key)
                #expect(command.signer == "grant-service")
                #expect(command.payload.deviceID == session.deviceID && command.payload.action == action)
                #expect(command.payload.eventID == committed.eventID && command.payload.commandID == entry.commandID)
                #expect(try await session.client.deviceCommands(after: entry.seq).commands.isEmpty)
            }
            // Published too, and the same bytes.
            let published = Set(try await grant.messages(.deviceCommands, count: 3).compactMap(\.value))
            let kept = try await grant.withConnection { connection in
                try await connection.query("SELECT envelope FROM device_commands").map { try $0.decode(Data.self, column: 0) }
            }
            #expect(Set(kept) == published)

            var refused = false
            do { _ = try await adultB.client.deviceCommands(after: -1) } catch let error as GrantServiceError {
                refused = error.status == 400
            }
            #expect(refused, "a negative cursor is a 400")
        }
    }
}

