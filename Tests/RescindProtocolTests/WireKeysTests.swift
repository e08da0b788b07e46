import Foundation
import Testing

@testable import RescindProtocol

@Suite struct WireKeysTests {
    /// Every shape of name the wire types use, with the spelling the wire has always had.
    static let spellings: [(name: String, key: String)] = [
        ("schema", "schema"),
        ("eventID", "event_id"),
        ("familyMemberID", "family_member_id"),
        ("fmkVersion", "fmk_version"),
        ("fromFMKVersion", "from_fmk_version"),
        ("recordIDs", "record_ids"),
        ("deletedRecordIDs", "deleted_record_ids"),
        ("x25519PublicKey", "x25519_public_key"),
        ("p50Ms", "p50_ms"),
    ]

    @Test(arguments: spellings) func aNameAndItsKeyConvertBothWays(name: String, key: String) {
        #expect(WireKeys.snake(name) == key)
        #expect(WireKeys.camel(key) == name)
    }

    /// A field has one spelling: what `snake` never writes names no property.
    @Test(arguments: ["familyMemberID", "family_memberID", "family__member_id", "_event_id", "event_id_", "event-id", "évent_id", ""])
    func aKeySnakeNeverWritesNamesNothing(key: String) {
        #expect(WireKeys.camel(key) == nil)
    }

    @Test func theCanonicalDecoderRefusesAFieldSpelledInCamelCase() throws {
        let wire = #"{"user_id":"00000000-0000-0000-0000-0000000000A1","hash":"AQ=="}"#
        let camel = #"{"userID":"00000000-0000-0000-0000-0000000000A1","hash":"AQ=="}"#
        #expect(try CanonicalJSON.decode(Pinned.self, from: Data(wire.utf8)).userID == UUID(uuidString: "00000000-0000-0000-0000-0000000000a1"))
        #expect(throws: DecodingError.self) { try CanonicalJSON.decode(Pinned.self, from: Data(camel.utf8)) }
    }

    @Test func dictionaryKeysAreLeftAsTheyAre() throws {
        let value = Counts(byState: ["not_now": 1, "Healed": 2], byVersion: [3: "x"])
        let text = String(decoding: try CanonicalJSON.encode(value), as: UTF8.self)
        #expect(text == #"{"by_state":{"Healed":2,"not_now":1},"by_version":{"3":"x"}}"#)
        #expect(try CanonicalJSON.decode(Counts.self, from: Data(text.utf8)) == value)
    }

    struct Pinned: Codable {
        var userID: UUID
        var hash: Data
    }

    struct Counts: Codable, Equatable {
        var byState: [String: Int]
        var byVersion: [Int: String]
    }
}

extension WireKeysTests {
    /// The keys of a received object are the sender's: however many it makes up, what is
    /// remembered of their conversions stays bounded.
    @Test func madeUpKeysDoNotGrowTheCachesWithoutBound() {
        for index in 0..<(WireKeys.cacheLimit + 500) {
            _ = WireKeys.camel("made_up_\(index)")
            _ = WireKeys.snake("madeUp\(index)")
        }
        #expect(WireKeys.cached.camel <= WireKeys.cacheLimit && WireKeys.cached.snake <= WireKeys.cacheLimit)
        #expect(WireKeys.camel("family_member_id") == "familyMemberID" && WireKeys.snake("fromFMKVersion") == "from_fmk_version")
    }
}
