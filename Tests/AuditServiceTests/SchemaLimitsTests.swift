import Foundation
import RescindCrypto
import RescindProtocol
import RescindTestSupport
import Testing

/// The JSON Schemas in `schemas/` and the decoders (`SignedMessage.decode`, which checks
/// `MessageLimits`) accept and refuse the same values, on a table of edge values for every
/// bounded field of every inbound message type.
@Suite struct SchemaLimitsTests {
    /// One edge value: the field at `path` (inside `payload`) set to `value`.
    struct Edge: CustomStringConvertible, Sendable {
        let schema: String
        let path: [String]
        let value: JSONValue
        let valid: Bool
        var description: String { "\(schema) \(path.joined(separator: ".")) = \(value) (\(valid ? "valid" : "invalid"))" }
    }

    /// A JSON value that survives `Sendable` test arguments.
    enum JSONValue: Sendable, CustomStringConvertible {
        case int(Int), string(String), double(Double), remove, devices(Int), details(Int)
        var description: String {
            switch self {
            case .int(let value): "\(value)"
            case .string(let text): text.count > 40 ? "\(text.unicodeScalars.count) scalars" : text.debugDescription
            case .double(let value): "\(value)"
            case .remove: "(absent)"
            case .devices(let count): "\(count) devices"
            case .details(let count): "\(count) details"
            }
        }
    }

    static let max = Int(Int32.max)

    static func integers(_ schema: String, _ field: String, min: Int) -> [Edge] {
        [
            Edge(schema: schema, path: [field], value: .int(min - 1), valid: false),
            Edge(schema: schema, path: [field], value: .int(min), valid: true),
            Edge(schema: schema, path: [field], value: .int(max), valid: true),
            Edge(schema: schema, path: [field], value: .int(max + 1), valid: false),
            Edge(schema: schema, path: [field], value: .int(Int.max), valid: false),
            Edge(schema: schema, path: [field], value: .string("1"), valid: false),
            Edge(schema: schema, path: [field], value: .double(2.5), valid: false),
        ]
    }

    static func text(_ schema: String, _ path: [String], max: Int) -> [Edge] {
        [
            Edge(schema: schema, path: path, value: .string(String(repeating: "x", count: max)), valid: true),
            Edge(schema: schema, path: path, value: .string(String(repeating: "é", count: max)), valid: true),
            Edge(schema: schema, path: path, value: .string(String(repeating: "🙂", count: max)), valid: true),
            Edge(schema: schema, path: path, value: .string(String(repeating: "x", count: max + 1)), valid: false),
            Edge(schema: schema, path: path, value: .string("a\u{0}b"), valid: false),
            Edge(schema: schema, path: path, value: .string("line\nbreak"), valid: false),
            Edge(schema: schema, path: path, value: .string("delete\u{7f}"), valid: false),
            Edge(schema: schema, path: path, value: .int(5), valid: false),
        ]
    }

    static func timestamps(_ schema: String, _ field: String) -> [Edge] {
        [
            Edge(schema: schema, path: [field], value: .string("1999-12-31T23:59:59.999Z"), valid: false),
            Edge(schema: schema, path: [field], value: .string("2000-01-01T00:00:00.000Z"), valid: true),
            Edge(schema: schema, path: [field], value: .string("2199-12-31T23:59:59.999Z"), valid: true),
            Edge(schema: schema, path: [field], value: .string("2200-01-01T00:00:00.000Z"), valid: false),
            Edge(schema: schema, path: [field], value: .string("yesterday"), valid: false),
        ]
    }

    static func key(_ schema: String, _ path: [String]) -> [Edge] {
        [
            Edge(schema: schema, path: path, value: .string(Data(count: 31).base64EncodedString()), valid: false),
            Edge(schema: schema, path: path, value: .string(Data(repeating: 7, count: 32).base64EncodedString()), valid: true),
            Edge(schema: schema, path: path, value: .string(Data(count: 33).base64EncodedString()), valid: false),
        ]
    }

    static let edges: [Edge] = {
        let ack = DeviceAck.schema, event = RevocationEvent.schema, access = AccessEvent.schema, command = DeviceCommand.schema
        var edges: [Edge] = []
        for field in ["records_processed", "fmk_version", "duration_ms"] { edges += integers(ack, field, min: 0) }
        edges += text(ack, ["error"], max: MessageLimits.errorLength)
        edges += timestamps(ack, "acked_at")
        edges += integers(event, "new_fmk_version", min: 2)
        edges += integers(event, "records_reencrypted", min: 0)
        edges += integers(event, "client_duration_ms", min: 0)
        edges += text(event, ["reason"], max: MessageLimits.reasonLength)
        edges += timestamps(event, "occurred_at")
        edges += key(event, ["owner_agreement_public_key"])
        edges += key(event, ["expected_devices", "0", "signing_public_key"])
        edges += [
            Edge(schema: event, path: ["expected_devices"], value: .devices(MessageLimits.expectedDevices), valid: true),
            Edge(schema: event, path: ["expected_devices"], value: .devices(MessageLimits.expectedDevices + 1), valid: false),
        ]
        edges += integers(access, "fmk_version", min: 1)
        edges += text(access, ["details", "note"], max: MessageLimits.detailValueLength)
        edges += text(access, ["details", String(repeating: "k", count: MessageLimits.detailKeyLength + 1)], max: 0)
            .filter { !$0.valid }
        edges += [
            Edge(schema: access, path: ["details"], value: .details(MessageLimits.detailEntries), valid: true),
            Edge(schema: access, path: ["details"], value: .details(MessageLimits.detailEntries + 1), valid: false),
            Edge(schema: access, path: ["details", ""], value: .string("empty key"), valid: false),
            Edge(schema: access, path: ["details", "a\u{0}"], value: .string("NUL in key"), valid: false),
        ]
        edges += timestamps(access, "occurred_at")
        edges += key(access, ["owner_agreement_public_key"])
        edges += integers(command, "new_fmk_version", min: 1)
        edges += timestamps(command, "issued_at")
        let violation = KeyChainViolation.schema
        for field in ["offered_fmk_version", "statement_seq", "verified_seq"] { edges += integers(violation, field, min: 0) }
        edges += text(violation, ["detail"], max: MessageLimits.errorLength)
        edges += timestamps(violation, "detected_at")
        edges += [Edge(schema: violation, path: ["code"], value: .string("made_up"), valid: false)]
        return edges
    }()

    /// A valid envelope of `schema` as a JSON object (signed by a throwaway key: decoding
    /// does not verify, and the signature is not what this table is about).
    static func validEnvelope(_ schema: String) throws -> [String: Any] {
        let family = TestFamily()
        let device = TestFamily.Device(userID: UUID())
        let revocation = family.revocation(of: device.userID, devices: [device])
        let key = Ed25519.PrivateKey()
        let data: Data =
            switch schema {
            case DeviceAck.schema:
                try SignedMessage(
                    schema: schema, signer: "device:\(device.id.uuidString.lowercased())",
                    payload: TestFamily.ack(device, for: revocation, outcome: .failed, error: "disk full"), key: key
                ).encoded()
            case RevocationEvent.schema:
                try SignedMessage(schema: schema, signer: "grant-service", payload: revocation, key: key).encoded()
            case KeyChainViolation.schema:
                try SignedMessage(
                    schema: schema, signer: "device:\(device.id.uuidString.lowercased())",
                    payload: family.violation(by: device), key: key
                ).encoded()
            case AccessEvent.schema:
                try SignedMessage(
                    schema: schema, signer: "grant-service",
                    payload: family.accessEvent(.ownershipTransferred, details: ["note": "x"]), key: key
                ).encoded()
            default:
                try SignedMessage(
                    schema: schema, signer: "grant-service",
                    payload: DeviceCommand(
                        commandID: UUID(), eventID: UUID(), deviceID: UUID(), action: .fmkRotation, familyMemberID: UUID(),
                        newFMKVersion: 2, issuedAt: Timestamp.truncated(Date())),
                    key: key
                ).encoded()
            }
        return try JSONSerialization.jsonObject(with: data) as! [String: Any]
    }

    static func setting(_ value: JSONValue, at path: ArraySlice<String>, in container: Any) -> Any {
        guard let head = path.first else {
            switch value {
            case .int(let number): return number
            case .string(let text): return text
            case .double(let number): return number
            case .remove: return NSNull()
            case .devices(let count):
                let template = (container as! [Any])[0]
                return (0..<count).map { _ in template }
            case .details(let count):
                return Dictionary(uniqueKeysWithValues: (0..<count).map { ("k\($0)", "v") })
            }
        }
        if var array = container as? [Any], let index = Int(head) {
            array[index] = setting(value, at: path.dropFirst(), in: array[index])
            return array
        }
        var object = container as! [String: Any]
        object[head] = setting(value, at: path.dropFirst(), in: object[head] ?? [Any]())
        return object
    }

    static func decoderAccepts(_ data: Data, schema: String) -> Bool {
        switch schema {
        case DeviceAck.schema: (try? SignedMessage<DeviceAck>.decode(data, schema: schema)) != nil
        case RevocationEvent.schema: (try? SignedMessage<RevocationEvent>.decode(data, schema: schema)) != nil
        case AccessEvent.schema: (try? SignedMessage<AccessEvent>.decode(data, schema: schema)) != nil
        case KeyChainViolation.schema: (try? SignedMessage<KeyChainViolation>.decode(data, schema: schema)) != nil
        default: (try? SignedMessage<DeviceCommand>.decode(data, schema: schema)) != nil
        }
    }

    @Test(arguments: edges)
    func schemaAndDecoderAgree(_ edge: Edge) throws {
        var envelope = try Self.validEnvelope(edge.schema)
        envelope["payload"] = Self.setting(edge.value, at: edge.path[...], in: envelope["payload"]!)
        let data = try JSONSerialization.data(withJSONObject: envelope)
        let problems = try JSONSchemaValidator.load(edge.schema).problems(data)
        #expect(problems.isEmpty == edge.valid, "schema: \(problems)")
        #expect(Self.decoderAccepts(data, schema: edge.schema) == edge.valid, "decoder")
    }

    @Test func theValidBaseOfEveryTableRowPassesBoth() throws {
        for schema in [DeviceAck.schema, RevocationEvent.schema, AccessEvent.schema, DeviceCommand.schema, KeyChainViolation.schema] {
            let data = try JSONSerialization.data(withJSONObject: try Self.validEnvelope(schema))
            #expect(try JSONSchemaValidator.load(schema).problems(data).isEmpty, "\(schema)")
            #expect(Self.decoderAccepts(data, schema: schema), "\(schema)")
        }
    }
}

/// Generated values at the edges of the limits, validly signed, pass both the decoders and
/// the schemas; generated hostile values signed the same way pass neither.
@Suite struct GeneratedEdgeTests {
    static func decode(_ data: Data, _ topic: Topic) -> Result<Void, any Error> {
        Result {
            switch topic {
            case .revocationEvents: _ = try SignedMessage<RevocationEvent>.decode(data, schema: RevocationEvent.schema)
            case .accessEvents: _ = try SignedMessage<AccessEvent>.decode(data, schema: AccessEvent.schema)
            case .deviceAcks: _ = try SignedMessage<DeviceAck>.decode(data, schema: DeviceAck.schema)
            default: _ = try SignedMessage<DeviceCommand>.decode(data, schema: DeviceCommand.schema)
            }
        }
    }

    static let schemas: [Topic: String] = [
        .revocationEvents: RevocationEvent.schema, .accessEvents: AccessEvent.schema, .deviceAcks: DeviceAck.schema,
        .deviceCommands: DeviceCommand.schema,
    ]

    @Test(arguments: [Topic.revocationEvents, .accessEvents, .deviceAcks, .deviceCommands])
    func edgeValuesAreAcceptedAndHostileOnesRefused(_ topic: Topic) throws {
        let device = TestFamily.Device(userID: UUID())
        let revocation = TestFamily().revocation(of: UUID(), devices: [device])
        var generator = HostileEnvelopes(
            seed: 7, context: .init(grantKey: Ed25519.PrivateKey(), revocation: revocation, deviceKeys: [device.id: device.key], commandDevice: UUID()))
        let validator = try JSONSchemaValidator.load(Self.schemas[topic]!)
        for _ in 0..<40 {
            let edge = try #require(generator.next(topic, kind: .signedEdge).value)
            if case .failure(let error) = Self.decode(edge, topic) { Issue.record("\(topic) edge refused: \(error)") }
            let problems = try validator.problems(edge)
            #expect(problems.isEmpty, "\(topic): \(problems)")
        }
    }
}
