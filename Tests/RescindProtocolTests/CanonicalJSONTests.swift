import Foundation
import Testing

@testable import RescindProtocol

@Suite struct CanonicalJSONTests {
    let command = DeviceCommand(
        commandID: UUID(uuidString: "00000000-0000-0000-0000-0000000000c1")!,
        eventID: UUID(uuidString: "00000000-0000-0000-0000-0000000000e1")!,
        deviceID: UUID(uuidString: "00000000-0000-0000-0000-0000000000d1")!,
        action: .secureDeletion,
        familyMemberID: UUID(uuidString: "00000000-0000-0000-0000-0000000000f1")!,
        newFMKVersion: 2,
        issuedAt: Timestamp.parse("2025-01-20T15:00:00.123Z")!)

    @Test func encodesSortedSnakeCaseKeysWithoutWhitespace() throws {
        let text = String(decoding: try CanonicalJSON.encode(command), as: UTF8.self)
        #expect(
            text == #"{"command_id":"00000000-0000-0000-0000-0000000000C1","device_id":"00000000-0000-0000-0000-0000000000D1","event_id":"00000000-0000-0000-0000-0000000000E1","family_member_id":"00000000-0000-0000-0000-0000000000F1","issued_at":"2025-01-20T15:00:00.123Z","new_fmk_version":2,"type":"secure_deletion"}"#)
    }

    @Test func decodeThenEncodeGivesTheSameBytes() throws {
        let bytes = try CanonicalJSON.encode(command)
        let decoded = try CanonicalJSON.decode(DeviceCommand.self, from: bytes)
        #expect(decoded == command)
        #expect(try CanonicalJSON.encode(decoded) == bytes)
    }

    @Test func bytesTravelAsBase64() throws {
        let user = UserResponse(
            userID: UUID(), displayName: "Adult A", agreementPublicKey: Data([1, 2, 3]),
            identityPublicKey: Data(repeating: 0xFF, count: 2))
        let text = String(decoding: try CanonicalJSON.encode(user), as: UTF8.self)
        #expect(text.contains(#""agreement_public_key":"AQID""#))
        #expect(text.contains(#""identity_public_key":"//8=""#))
    }

    @Test func unknownActionIsRejected() throws {
        let bytes = try CanonicalJSON.encode(command)
        let tampered = String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "secure_deletion", with: "wipe_all")
        #expect(throws: DecodingError.self) {
            try CanonicalJSON.decode(DeviceCommand.self, from: Data(tampered.utf8))
        }
    }
}
