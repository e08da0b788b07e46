import Foundation
import RescindProtocol

/// The parsers that take bytes from the network, each as a libFuzzer target: any input must
/// be refused with an error or decoded into something that encodes back consistently; a
/// trap, an overflow or an inconsistent round trip is a finding.
enum FuzzTarget: String, CaseIterable, Sendable {
    /// `BinaryRecords`: an upload batch and a change-feed page (the record body parser).
    case binaryRecords = "binary-records"
    /// `SignedMessage.decode` for every message type on the topics (the envelope decoder).
    case envelope

    static let pageFamilyMember = UUID(uuidString: "00000000-0000-4000-8000-000000000001")!

    func run(_ input: Data) {
        switch self {
        case .binaryRecords: Self.binaryRecords(input)
        case .envelope: Self.envelope(input)
        }
    }

    /// A body that decodes must be the canonical encoding of what it decodes to.
    static func binaryRecords(_ input: Data) {
        if let batch = try? BinaryRecords.decodeUploadBatch(input) {
            let again = BinaryRecords.encode(batch)
            check(again == input, "an upload batch does not encode back to its bytes")
            check((try? BinaryRecords.decodeUploadBatch(again)) == batch, "an upload batch does not decode back")
        }
        if let page = try? BinaryRecords.decodePage(input, familyMemberID: pageFamilyMember) {
            let again = BinaryRecords.encode(page)
            check(again == input, "a page does not encode back to its bytes")
            check((try? BinaryRecords.decodePage(again, familyMemberID: pageFamilyMember)) == page, "a page does not decode back")
        }
        // A slice not starting at index 0 (as a body read into a larger buffer may be).
        var padded = Data([0xFF])
        padded.append(input)
        _ = try? BinaryRecords.decodeUploadBatch(padded.dropFirst())
        _ = try? BinaryRecords.decodePage(padded.dropFirst(), familyMemberID: pageFamilyMember)
    }

    static func envelope(_ input: Data) {
        decode(input, as: RevocationEvent.self, schema: RevocationEvent.schema)
        decode(input, as: AccessEvent.self, schema: AccessEvent.schema)
        decode(input, as: DeviceAck.self, schema: DeviceAck.schema)
        decode(input, as: DeviceCommand.self, schema: DeviceCommand.schema)
        decode(input, as: AuditNotification.self, schema: AuditNotification.schema)
        decode(input, as: GovernanceNotice.self, schema: GovernanceNotice.schema)
    }

    /// An envelope that decodes re-encodes to one that decodes to the same content.
    static func decode<Payload: Codable & Sendable & Equatable>(_ input: Data, as _: Payload.Type, schema: String) {
        guard let message = try? SignedMessage<Payload>.decode(input, schema: schema) else { return }
        guard let bytes = try? message.encoded() else { return check(false, "a decoded \(schema) envelope does not encode") }
        guard let again = try? SignedMessage<Payload>.decode(bytes, schema: schema) else {
            return check(false, "a re-encoded \(schema) envelope does not decode")
        }
        check(
            again.payload == message.payload && again.signer == message.signer && again.signature == message.signature,
            "a \(schema) envelope changes in a round trip")
    }

    static func check(_ condition: Bool, _ finding: @autoclosure () -> String) {
        if !condition { fatalError("fuzz finding: \(finding())") }
    }
}
