import Foundation
import RescindCrypto
import RescindProtocol
import Testing

@testable import DeviceAgent

@Suite("Command validation (pure)")
struct CommandValidationTests {
    let serviceKey = Ed25519.PrivateKey()
    let device = UUID()

    func command(to deviceID: UUID? = nil, version: Int = 2, action: DeviceAction = .fmkRotation) -> DeviceCommand {
        DeviceCommand(
            commandID: UUID(), eventID: UUID(), deviceID: deviceID ?? device, action: action, familyMemberID: UUID(),
            newFMKVersion: version, issuedAt: Date(timeIntervalSince1970: 1_700_000_000))
    }

    func envelope(_ command: DeviceCommand, signer: String = "grant-service", key: Ed25519.PrivateKey? = nil, schema: String = DeviceCommand.schema) throws -> Data {
        try SignedMessage(schema: schema, signer: signer, payload: command, key: key ?? serviceKey).encoded()
    }

    func validate(_ value: Data?, key: String? = nil) -> CommandValidation {
        CommandValidation.validate(
            key: Data((key ?? device.uuidString.lowercased()).utf8), value: value, deviceID: device,
            serviceKey: serviceKey.publicKey)
    }

    @Test("a command signed by the pinned key and addressed here is accepted")
    func accepted() throws {
        let command = command()
        #expect(validate(try envelope(command)) == .accepted(command))
    }

    @Test("messages keyed to another device are ignored without being judged")
    func otherDevice() throws {
        #expect(validate(try envelope(command(to: UUID())), key: UUID().uuidString.lowercased()) == .ignored)
        #expect(validate(Data("garbage".utf8), key: UUID().uuidString) == .ignored)
    }

    @Test("a signature by any other key is rejected as forged")
    func forged() throws {
        #expect(validate(try envelope(command(), key: Ed25519.PrivateKey())) == .rejected(.badSignature))
    }

    @Test("an unsigned or tampered envelope is rejected")
    func unsignedOrTampered() throws {
        var message = try SignedMessage(schema: DeviceCommand.schema, signer: "grant-service", payload: command(), key: serviceKey)
        message.signature = Data()
        #expect(validate(try message.encoded()) == .rejected(.badSignature))
        message = try SignedMessage(schema: DeviceCommand.schema, signer: "grant-service", payload: command(), key: serviceKey)
        message.payload.newFMKVersion = 99
        #expect(validate(try message.encoded()) == .rejected(.badSignature))
    }

    @Test("a genuine signature under another signer name or schema is rejected")
    func wrongSignerOrSchema() throws {
        #expect(validate(try envelope(command(), signer: "audit-service")) == .rejected(.unknownSigner))
        #expect(validate(try envelope(command(), schema: DeviceAck.schema)) == .rejected(.unexpectedSchema))
    }

    @Test("a genuine command for another device, keyed to this one, is rejected as misaddressed")
    func misaddressed() throws {
        #expect(validate(try envelope(command(to: UUID()))) == .rejected(.misaddressed))
    }

    @Test("malformed bytes, tombstones and non-positive versions are rejected")
    func malformed() throws {
        #expect(validate(Data("{not json".utf8)) == .rejected(.malformed))
        #expect(validate(nil) == .rejected(.malformed))
        #expect(validate(try envelope(command(version: 0))) == .rejected(.invalidField))
    }
}
