import Foundation
import RescindCrypto
import Testing

@testable import RescindProtocol

@Suite struct SignedMessageTests {
    let key = Ed25519.PrivateKey()
    let command = DeviceCommand(
        commandID: UUID(), eventID: UUID(), deviceID: UUID(), action: .fmkRotation,
        familyMemberID: UUID(), newFMKVersion: 3, issuedAt: Timestamp.truncated(Date()))

    func signed() throws -> Data {
        try SignedMessage(schema: DeviceCommand.schema, signer: "grant-service", payload: command, key: key).encoded()
    }

    func edit(_ bytes: Data, _ change: (inout [String: Any]) -> Void) throws -> Data {
        var object = try #require(try JSONSerialization.jsonObject(with: bytes) as? [String: Any])
        change(&object)
        return try JSONSerialization.data(withJSONObject: object)
    }

    @Test func roundTripVerifies() throws {
        let message = try SignedMessage<DeviceCommand>.verified(
            from: try signed(), schema: DeviceCommand.schema, key: key.publicKey)
        #expect(message.payload.commandID == command.commandID)
        #expect(message.payload.newFMKVersion == 3)
        #expect(message.signer == "grant-service")
    }

    @Test func wrongKeyIsRejected() throws {
        #expect(throws: MessageError.badSignature) {
            try SignedMessage<DeviceCommand>.verified(
                from: try signed(), schema: DeviceCommand.schema, key: Ed25519.PrivateKey().publicKey)
        }
    }

    @Test func tamperedPayloadIsRejected() throws {
        let tampered = try edit(try signed()) { object in
            var payload = object["payload"] as! [String: Any]
            payload["type"] = "secure_deletion"
            object["payload"] = payload
        }
        #expect(throws: MessageError.badSignature) {
            try SignedMessage<DeviceCommand>.verified(from: tampered, schema: DeviceCommand.schema, key: key.publicKey)
        }
    }

    @Test func unknownFieldsFailClosed() throws {
        let extended = try edit(try signed()) { object in
            var payload = object["payload"] as! [String: Any]
            payload["also_erase"] = ["everything"]
            object["payload"] = payload
        }
        #expect(throws: MessageError.unsignedContent) {
            try SignedMessage<DeviceCommand>.verified(from: extended, schema: DeviceCommand.schema, key: key.publicKey)
        }
    }

    @Test func reorderedKeysAndWhitespaceStillVerify() throws {
        // Canonical form is what is signed, not the received bytes' layout.
        let object = try JSONSerialization.jsonObject(with: try signed())
        let pretty = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted])
        let message = try SignedMessage<DeviceCommand>.verified(from: pretty, schema: DeviceCommand.schema, key: key.publicKey)
        #expect(message.payload == command)
    }

    @Test func signerAndSchemaAreCovered() throws {
        let resigned = try edit(try signed()) { $0["signer"] = "device:someone" }
        #expect(throws: MessageError.badSignature) {
            try SignedMessage<DeviceCommand>.verified(from: resigned, schema: DeviceCommand.schema, key: key.publicKey)
        }
        #expect(throws: MessageError.unexpectedSchema(DeviceCommand.schema)) {
            try SignedMessage<DeviceCommand>.verified(from: try signed(), schema: DeviceAck.schema, key: key.publicKey)
        }
    }

    @Test func garbageIsMalformed() {
        for bytes in [Data(), Data("{".utf8), Data("{\"schema\":1}".utf8), Data(repeating: 0xFF, count: 64)] {
            #expect(throws: MessageError.malformed) {
                try SignedMessage<DeviceCommand>.verified(from: bytes, schema: DeviceCommand.schema, key: key.publicKey)
            }
        }
    }

    @Test func truncatedSignatureIsRejected() throws {
        let truncated = try edit(try signed()) { object in
            object["signature"] = String((object["signature"] as! String).dropLast(8))
        }
        #expect(throws: (any Error).self) {
            try SignedMessage<DeviceCommand>.verified(from: truncated, schema: DeviceCommand.schema, key: key.publicKey)
        }
    }
}
