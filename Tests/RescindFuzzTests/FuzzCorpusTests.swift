import Foundation
import RescindProtocol
import Testing

@testable import RescindFuzz

/// The committed fuzz corpus (`Fuzz/corpus/<target>`, the seeds, and `Fuzz/regressions/<target>`,
/// inputs that once made a target fail) replayed through the same targets libFuzzer runs, in a
/// normal build: any trap or inconsistent round trip fails the suite.
@Suite struct FuzzCorpusTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz")

    static func inputs(_ target: FuzzTarget) throws -> [(name: String, bytes: Data)] {
        var inputs: [(String, Data)] = []
        for folder in ["corpus", "regressions"] {
            let directory = root.appendingPathComponent(folder).appendingPathComponent(target.rawValue)
            guard FileManager.default.fileExists(atPath: directory.path) else { continue }
            for file in try FuzzReplay.files(at: directory.path) {
                inputs.append(("\(folder)/\(file.lastPathComponent)", try Data(contentsOf: file)))
            }
        }
        return inputs
    }

    @Test(arguments: FuzzTarget.allCases)
    func everyCommittedInputRunsThroughItsTarget(_ target: FuzzTarget) throws {
        let inputs = try Self.inputs(target)
        #expect(inputs.count >= 5, "the \(target.rawValue) corpus is missing")
        for input in inputs { target.run(input.bytes) }
    }

    /// The seeds are what they claim to be, so the fuzzer starts from bodies that parse.
    @Test func theRecordSeedsAreWellFormedBodies() throws {
        let seeds = Dictionary(uniqueKeysWithValues: try Self.inputs(.binaryRecords))
        #expect(try BinaryRecords.decodeUploadBatch(try #require(seeds["corpus/upload-three"])).records.count == 3)
        let page = try BinaryRecords.decodePage(try #require(seeds["corpus/page-two-one-deleted"]), familyMemberID: UUID())
        #expect(page.records.count == 2 && page.deletedRecordIDs.count == 1 && page.hasMore)
        #expect(throws: BinaryRecords.FormatError.self) {
            try BinaryRecords.decodeUploadBatch(try #require(seeds["corpus/version-1-header"]))
        }
    }

    @Test func theEnvelopeSeedsDecodeOrAreRefusedAsIntended() throws {
        let seeds = Dictionary(uniqueKeysWithValues: try Self.inputs(.envelope))
        let event = try SignedMessage<RevocationEvent>.decode(
            try #require(seeds["corpus/revocation-event"]), schema: RevocationEvent.schema)
        #expect(event.payload.expectedDevices.count == 2)
        _ = try SignedMessage<AccessEvent>.decode(try #require(seeds["corpus/access-event"]), schema: AccessEvent.schema)
        _ = try SignedMessage<DeviceAck>.decode(try #require(seeds["corpus/device-ack-failed"]), schema: DeviceAck.schema)
        for (name, expected) in [("nul-in-signer", MessageError.invalidField("signer")), ("not-json", .malformed)] {
            let bytes = try #require(seeds["corpus/\(name)"])
            #expect(throws: expected, "\(name)") {
                _ = try SignedMessage<RevocationEvent>.decode(bytes, schema: RevocationEvent.schema)
            }
        }
        let unknownField = try #require(seeds["corpus/unknown-field"])
        #expect(throws: MessageError.unsignedContent) {
            _ = try SignedMessage<AccessEvent>.decode(unknownField, schema: AccessEvent.schema)
        }
    }
}
