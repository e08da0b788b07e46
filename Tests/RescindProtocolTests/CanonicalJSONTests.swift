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

    /// The comparison that refuses unsigned content, on trees with every JSON kind.
    @Test func sameJSONComparesTreesExactly() throws {
        func tree(_ text: String) throws -> Any { try JSONSerialization.jsonObject(with: Data(text.utf8)) }
        let base = #"{"a":"x/y","b":3,"c":[1,[2,{"d":true}]],"e":{"f":null},"g":1.5}"#
        #expect(CanonicalJSON.sameJSON(try tree(base), try tree(base)))
        #expect(CanonicalJSON.sameJSON(try tree(#"{"e":{"f":null},"a":"x/y","g":1.5,"c":[1,[2,{"d":true}]],"b":3}"#), try tree(base)))
        for other in [
            #"{"a":"x/y","b":3,"c":[1,[2,{"d":true}]],"e":{"f":null},"g":1.5,"h":1}"#,  // one field more
            #"{"a":"x/y","b":3,"c":[1,[2,{"d":true}]],"e":{"f":null}}"#,  // one fewer
            #"{"a":"x/y","b":4,"c":[1,[2,{"d":true}]],"e":{"f":null},"g":1.5}"#,  // another number
            #"{"a":"x/y","b":"3","c":[1,[2,{"d":true}]],"e":{"f":null},"g":1.5}"#,  // a string for a number
            #"{"a":"x/y","b":3,"c":[[2,{"d":true}],1],"e":{"f":null},"g":1.5}"#,  // array order
            #"{"a":"x/y","b":3,"c":[1,[2,{"d":true,"z":0}]],"e":{"f":null},"g":1.5}"#,  // deep in an array
            #"{"a":"x/y","b":3,"c":[1,[2,{"d":true}]],"e":{"f":0},"g":1.5}"#,  // a value for null
        ] {
            #expect(!CanonicalJSON.sameJSON(try tree(other), try tree(base)), "\(other)")
        }
        // Canonically equivalent but different code points: not the same text, so not signed.
        #expect(!CanonicalJSON.sameJSON(try tree("{\"a\":\"\u{E9}\"}"), try tree("{\"a\":\"e\u{301}\"}")))
    }

    /// Unsigned input may differ in its values' spelling, never in its fields.
    @Test func namesOnlyKnownFieldsRefusesWhatRidesAlongAtAnyDepth() throws {
        func tree(_ text: String) throws -> Any { try JSONSerialization.jsonObject(with: Data(text.utf8)) }
        let bytes = try CanonicalJSON.encode(command)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(CanonicalJSON.namesOnlyKnownFields(try tree(text), command))
        #expect(CanonicalJSON.namesOnlyKnownFields(try tree(text.lowercased()), command))  // every value respelled
        #expect(!CanonicalJSON.namesOnlyKnownFields(try tree(text.replacingOccurrences(of: "{", with: #"{"note":"x","#)), command))
        #expect(CanonicalJSON.namesOnly(try tree(#"{"a":[{"b":1}]}"#), try tree(#"{"a":[{"b":2,"c":3}]}"#)))
        #expect(!CanonicalJSON.namesOnly(try tree(#"{"a":[{"b":1,"z":0}]}"#), try tree(#"{"a":[{"b":2,"c":3}]}"#)))
        #expect(!CanonicalJSON.namesOnly(try tree(#"{"a":[1,2]}"#), try tree(#"{"a":[1]}"#)))
    }

    @Test func holdsExactlyComparesWithTheCanonicalEncoding() throws {
        let bytes = try CanonicalJSON.encode(command)
        #expect(CanonicalJSON.holdsExactly(try JSONSerialization.jsonObject(with: bytes), command))
        let extra = String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "{", with: #"{"note":"x","#)
        #expect(!CanonicalJSON.holdsExactly(try JSONSerialization.jsonObject(with: Data(extra.utf8)), command))
    }
}
