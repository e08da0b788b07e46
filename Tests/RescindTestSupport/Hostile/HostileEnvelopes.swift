import Foundation
import RescindCrypto
import RescindDevKit
import RescindProtocol

/// A seeded generator of hostile messages for the topics Rescind consumes, playing two
/// adversaries: anyone who can write to a topic (no key: mutated envelopes, NUL and invalid
/// UTF-8 in every string, extreme numbers, huge strings, deep nesting, duplicate keys, wrong
/// types, garbage), and a holder of a valid key (an expected device's, or the grant
/// service's) who signs payloads whose values are hostile.
///
/// Every sample gets fresh ids, so each message is either refused or applied on its own:
/// a consumer can be held to account for every one.
///
/// Reproducible: every id, key and choice is drawn from the seed, and every timestamp is
/// `now` or a fixed date, so the same seed, context and `now` give the same bytes; draw the
/// context from the seed too (`signingKey`, `SeededGenerator.uuid()`), and a seed alone
/// replays a run's samples (but for the clock).
public struct HostileEnvelopes {
    /// What a sample does, for reports.
    public enum Kind: String, CaseIterable, Sendable {
        case hostileString = "hostile_string", invalidUTF8 = "invalid_utf8", extremeNumber = "extreme_number"
        case hugeString = "huge_string", deepNesting = "deep_nesting", duplicateKey = "duplicate_key"
        case wrongType = "wrong_type", truncated, garbage, tombstone, signedHostile = "signed_hostile"
        /// Validly signed, every value at the edge of its limits but within them: must be applied.
        case signedEdge = "signed_edge"
    }

    public struct Sample: Sendable {
        public var topic: Topic
        public var key: Data?
        public var value: Data?
        public var kind: Kind
    }

    /// Who the hostile messages are about and which keys a signing adversary holds.
    public struct Context: Sendable {
        public var grantKey: Ed25519.PrivateKey
        /// A revocation the consumer knows, and the keys of its expected devices.
        public var revocation: RevocationEvent
        public var deviceKeys: [UUID: Ed25519.PrivateKey]
        /// The device that `device_commands` samples are addressed to.
        public var commandDevice: UUID

        public init(
            grantKey: Ed25519.PrivateKey, revocation: RevocationEvent, deviceKeys: [UUID: Ed25519.PrivateKey], commandDevice: UUID
        ) {
            self.grantKey = grantKey
            self.revocation = revocation
            self.deviceKeys = deviceKeys
            self.commandDevice = commandDevice
        }
    }

    public var random: SeededGenerator
    public let context: Context
    /// Longest generated string, in bytes (keep under the topic's maximum message size).
    public let maxStringBytes: Int
    /// The clock of every sample (whole milliseconds), fixed when the generator is made.
    public let now: Date

    public init(seed: UInt64, context: Context, maxStringBytes: Int = 200_000, now: Date = Date()) {
        self.random = SeededGenerator(seed: seed)
        self.context = context
        self.maxStringBytes = maxStringBytes
        self.now = Timestamp.truncated(now)
    }

    /// A signing key drawn from `random` (test identities only).
    public static func signingKey(_ random: inout SeededGenerator) -> Ed25519.PrivateKey {
        var seed = random.bytes(Ed25519.seedByteCount)
        return try! Ed25519.PrivateKey(seed: &seed)
    }

    /// An X25519 public key drawn from `random`: 32 bytes that are not a small-order point
    /// (which the consumers refuse). Nobody holds its private key: good for owners nobody reads as.
    public static func agreementPublicKey(_ random: inout SeededGenerator) -> Data {
        while true {
            let bytes = random.bytes(X25519.keyByteCount)
            if (try? X25519.PublicKey(rawRepresentation: bytes)) != nil { return Data(bytes) }
        }
    }

    public mutating func next(_ topic: Topic) -> Sample {
        next(topic, kind: Kind.allCases.randomElement(using: &random)!)
    }

    public mutating func next(_ topic: Topic, kind: Kind) -> Sample {
        let base = baseMessage(topic)
        var sample = Sample(topic: topic, key: base.key, value: nil, kind: kind)
        switch kind {
        case .tombstone:
            sample.value = nil
        case .garbage:
            sample.value = Data((0..<Int.random(in: 0...64, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })
        case .truncated:
            sample.value = base.value.prefix(Int.random(in: 0..<base.value.count, using: &random))
        case .signedHostile:
            sample.value = signedHostile(topic, edge: false)
        case .signedEdge:
            sample.value = signedHostile(topic, edge: true)
        case .duplicateKey:
            sample.value = duplicateKey(base.value)
        default:
            sample.value = mutate(base.value, kind: kind)
        }
        // The message key is untrusted too.
        if Int.random(in: 0..<10, using: &random) == 0 { sample.key = hostileBytes() }
        return sample
    }

    // MARK: Valid bases

    private mutating func baseMessage(_ topic: Topic) -> (key: Data, value: Data) {
        let family = random.uuid()
        let owner = Self.agreementPublicKey(&random)
        switch topic {
        case .revocationEvents:
            let devices = (0..<Int.random(in: 0...3, using: &random)).map { _ in
                RevocationEvent.ExpectedDevice(
                    deviceID: random.uuid(), userID: random.uuid(), action: Bool.random(using: &random) ? .fmkRotation : .secureDeletion,
                    signingPublicKey: signingPublicKey())
            }
            let event = RevocationEvent(
                eventID: random.uuid(), familyMemberID: family, ownerUserID: random.uuid(), ownerAgreementPublicKey: owner,
                revokedUserID: random.uuid(), revokedByUserID: random.uuid(), newFMKVersion: 2, recordsReencrypted: 10, reason: "test",
                clientDurationMs: 5, occurredAt: now, expectedDevices: devices)
            return (Self.key(family), Self.signed(RevocationEvent.schema, "grant-service", event, context.grantKey))
        case .accessEvents:
            let event = AccessEvent(
                eventID: random.uuid(), kind: AccessEvent.Kind.allCases.randomElement(using: &random)!, familyMemberID: family,
                ownerUserID: random.uuid(), ownerAgreementPublicKey: owner, actorUserID: random.uuid(), targetUserID: random.uuid(),
                fmkVersion: 1, details: ["note": "base"], occurredAt: now)
            return (Self.key(family), Self.signed(AccessEvent.schema, "grant-service", event, context.grantKey))
        case .deviceAcks:
            let (ack, key) = baseAck()
            return (Self.key(ack.deviceID), Self.signed(DeviceAck.schema, Self.signer(ack.deviceID), ack, key))
        default:
            let command = DeviceCommand(
                commandID: random.uuid(), eventID: random.uuid(), deviceID: context.commandDevice, action: .fmkRotation,
                familyMemberID: family, newFMKVersion: 2, issuedAt: now)
            return (Self.key(context.commandDevice), Self.signed(DeviceCommand.schema, "grant-service", command, context.grantKey))
        }
    }

    private mutating func baseAck() -> (DeviceAck, Ed25519.PrivateKey) {
        let device = context.revocation.expectedDevices.randomElement(using: &random)!
        let ack = DeviceAck(
            ackID: random.uuid(), commandID: random.uuid(), eventID: context.revocation.eventID, deviceID: device.deviceID,
            action: device.action, outcome: .applied, recordsProcessed: 1,
            fmkVersion: device.action == .secureDeletion ? 0 : context.revocation.newFMKVersion, durationMs: 1, error: nil,
            ackedAt: now)
        return (ack, context.deviceKeys[device.deviceID]!)
    }

    // MARK: Unsigned mutations

    /// Replaces one value anywhere in the envelope (its own fields or the payload's) with a hostile one.
    private mutating func mutate(_ value: Data, kind: Kind) -> Data {
        let placeholder = "\u{E000}hostile\u{E000}"
        var object = try! JSONSerialization.jsonObject(with: value) as! [String: Any]
        // Sorted: a dictionary's order changes from one process to the next, the seed's draw must not.
        let paths = Self.paths(in: object, prefix: []).sorted { $0.lexicographicallyPrecedes($1) }
        let path = paths.randomElement(using: &random)!
        object = Self.replacing(path[...], in: object, with: placeholder) as! [String: Any]
        let text = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        let quoted = Data("\"\(placeholder)\"".utf8)
        let replacement: Data
        switch kind {
        case .hostileString: replacement = Self.json(hostileString())
        case .invalidUTF8: replacement = invalidUTF8String()
        case .extremeNumber: replacement = Data(Self.extremeNumbers.randomElement(using: &random)!.utf8)
        case .hugeString: replacement = Self.json(String(repeating: "A", count: Int.random(in: 1...maxStringBytes, using: &random)))
        case .deepNesting:
            let depth = Int.random(in: 100...20_000, using: &random)
            let open = Bool.random(using: &random) ? "[" : "{\"a\":"
            let close = open == "[" ? "]" : "}"
            replacement = Data((String(repeating: open, count: depth) + "1" + String(repeating: close, count: depth)).utf8)
        default:
            replacement = Data(Self.wrongTypes.randomElement(using: &random)!.utf8)
        }
        return text.replacing(quoted, with: replacement)
    }

    /// Writes one payload key twice, the second time with a hostile value.
    private mutating func duplicateKey(_ value: Data) -> Data {
        let object = try! JSONSerialization.jsonObject(with: value) as! [String: Any]
        let payload = object["payload"] as! [String: Any]
        let name = payload.keys.sorted().randomElement(using: &random)!
        let hostile = [Self.wrongTypes.randomElement(using: &random)!, String(decoding: Self.json(hostileString()), as: UTF8.self)]
            .randomElement(using: &random)!
        let marker = Data("\"payload\":{".utf8)
        let text = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        let inserted = Data("\"payload\":{\"\(name)\":\(hostile),".utf8)
        if Bool.random(using: &random) { return text.replacing(marker, with: inserted) }
        // Or an envelope field, written first with a hostile value.
        let field = ["schema", "signer", "signature", "payload"].randomElement(using: &random)!
        return Data("{\"\(field)\":\(hostile),".utf8) + text.dropFirst()
    }

    // MARK: Validly signed, hostile values

    private mutating func signedHostile(_ topic: Topic, edge: Bool) -> Data {
        if edge { return signedEdge(topic, now: now) }
        switch topic {
        case .deviceAcks:
            var (ack, key) = baseAck()
            ack.recordsProcessed = hostileInt()
            ack.fmkVersion = Bool.random(using: &random) ? hostileInt() : ack.fmkVersion
            ack.durationMs = hostileInt()
            ack.error = Bool.random(using: &random) ? hostileString() : nil
            ack.outcome = DeviceAck.Outcome.allCases.randomElement(using: &random)!
            ack.ackedAt = hostileDate(now)
            return Self.signed(DeviceAck.schema, Self.signer(ack.deviceID), ack, key)
        case .revocationEvents:
            let event = RevocationEvent(
                eventID: random.uuid(), familyMemberID: random.uuid(), ownerUserID: random.uuid(),
                ownerAgreementPublicKey: Self.agreementPublicKey(&random).prefix(Int.random(in: 30...32, using: &random)),
                revokedUserID: random.uuid(), revokedByUserID: random.uuid(), newFMKVersion: hostileInt(), recordsReencrypted: hostileInt(),
                reason: hostileString(), clientDurationMs: hostileInt(), occurredAt: hostileDate(now),
                expectedDevices: (0..<Int.random(in: 0...2, using: &random)).map { _ in
                    .init(deviceID: random.uuid(), userID: random.uuid(), action: .fmkRotation,
                          signingPublicKey: signingPublicKey().prefix(Int.random(in: 0...32, using: &random)))
                })
            return Self.signed(RevocationEvent.schema, "grant-service", event, context.grantKey)
        case .accessEvents:
            var details: [String: String] = [:]
            for _ in 0..<Int.random(in: 0...40, using: &random) { details[hostileString(short: true)] = hostileString() }
            let event = AccessEvent(
                eventID: random.uuid(), kind: .accessGranted, familyMemberID: random.uuid(), ownerUserID: random.uuid(),
                ownerAgreementPublicKey: Self.agreementPublicKey(&random), actorUserID: random.uuid(),
                targetUserID: nil, fmkVersion: hostileInt(), details: details, occurredAt: hostileDate(now))
            return Self.signed(AccessEvent.schema, "grant-service", event, context.grantKey)
        default:
            let command = DeviceCommand(
                commandID: random.uuid(), eventID: random.uuid(), deviceID: context.commandDevice, action: .secureDeletion,
                familyMemberID: random.uuid(), newFMKVersion: hostileInt(), issuedAt: hostileDate(now))
            return Self.signed(DeviceCommand.schema, "grant-service", command, context.grantKey)
        }
    }

    private mutating func signedEdge(_ topic: Topic, now: Date) -> Data {
        func int(_ minimum: Int) -> Int { [minimum, minimum + 1, MessageLimits.maxInteger].randomElement(using: &random)! }
        func date() -> Date {
            [now, MessageLimits.earliestTimestamp, MessageLimits.latestTimestamp.addingTimeInterval(-0.001)].randomElement(using: &random)!
        }
        func text(_ limit: Int) -> String {
            let unit = ["🙂", "é", "e\u{301}", "\u{202E}", "\u{FEFF}", "\u{10FFFF}", "'", "\\", "\""].randomElement(using: &random)!
            return String(String.UnicodeScalarView(String(repeating: unit, count: limit).unicodeScalars.prefix(limit)))
        }
        switch topic {
        case .deviceAcks:
            var (ack, key) = baseAck()
            ack.recordsProcessed = int(0)
            ack.durationMs = int(0)
            if ack.action == .fmkRotation { ack.fmkVersion = [context.revocation.newFMKVersion, MessageLimits.maxInteger].randomElement(using: &random)! }
            ack.outcome = DeviceAck.Outcome.allCases.randomElement(using: &random)!
            ack.error = ack.outcome == .failed ? text(MessageLimits.errorLength) : nil
            ack.ackedAt = date()
            return Self.signed(DeviceAck.schema, Self.signer(ack.deviceID), ack, key)
        case .revocationEvents:
            let event = RevocationEvent(
                eventID: random.uuid(), familyMemberID: random.uuid(), ownerUserID: random.uuid(),
                ownerAgreementPublicKey: Self.agreementPublicKey(&random), revokedUserID: random.uuid(),
                revokedByUserID: random.uuid(), newFMKVersion: int(2), recordsReencrypted: int(0), reason: text(MessageLimits.reasonLength),
                clientDurationMs: int(0), occurredAt: date(),
                expectedDevices: (0..<Int.random(in: 0...3, using: &random)).map { _ in
                    .init(deviceID: random.uuid(), userID: random.uuid(), action: .secureDeletion, signingPublicKey: signingPublicKey())
                })
            return Self.signed(RevocationEvent.schema, "grant-service", event, context.grantKey)
        case .accessEvents:
            var details: [String: String] = [:]
            for index in 0..<MessageLimits.detailEntries {
                details["\(index)" + text(MessageLimits.detailKeyLength - 2)] = text(MessageLimits.detailValueLength)
            }
            let event = AccessEvent(
                eventID: random.uuid(), kind: AccessEvent.Kind.allCases.randomElement(using: &random)!, familyMemberID: random.uuid(),
                ownerUserID: random.uuid(), ownerAgreementPublicKey: Self.agreementPublicKey(&random),
                actorUserID: random.uuid(), targetUserID: random.uuid(), fmkVersion: int(1), details: details, occurredAt: date())
            return Self.signed(AccessEvent.schema, "grant-service", event, context.grantKey)
        default:
            let command = DeviceCommand(
                commandID: random.uuid(), eventID: random.uuid(), deviceID: context.commandDevice, action: .secureDeletion,
                familyMemberID: random.uuid(), newFMKVersion: int(1), issuedAt: date())
            return Self.signed(DeviceCommand.schema, "grant-service", command, context.grantKey)
        }
    }

    // MARK: Hostile values

    /// A valid Ed25519 public key drawn from the seed.
    private mutating func signingPublicKey() -> Data {
        Data(Self.signingKey(&random).publicKey.rawRepresentation)
    }

    static let extremeNumbers = [
        "-1", "0", "2147483647", "2147483648", "-2147483649", "9223372036854775807", "9223372036854775808",
        "-9223372036854775808", "1e308", "1e400", "-0", "0.5", "1E2", "123456789012345678901234567890", "NaN",
    ]
    static let wrongTypes = ["null", "true", "false", "{}", "[]", "[null]", "{\"a\":1}", "\"\"", "0", "\"text\""]

    private mutating func hostileInt() -> Int {
        [-1, 0, 1, 2, Int(Int32.max), Int(Int32.max) + 1, Int.max, Int.min, Int(Int32.min), 1 << 40]
            .randomElement(using: &random)!
    }

    private mutating func hostileDate(_ now: Date) -> Date {
        [now, Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 946_684_799), Date(timeIntervalSince1970: 7_258_118_400),
         Date(timeIntervalSince1970: 253_402_300_799), now.addingTimeInterval(-86_400 * 365 * 30)]
            .randomElement(using: &random)!
    }

    private mutating func hostileString(short: Bool = false) -> String {
        let pieces = [
            "\u{0}", "a\u{0}b", "\u{1}\u{1f}", "\u{7f}", "\u{1b}[31m", "\n", "\r\n", "\t", "\\", "\"", "'; DROP TABLE audit_log; --",
            "\u{202E}evil", "\u{FEFF}", "\u{FFFF}", "\u{10FFFF}", "🙂", "é", "e\u{301}", "", "%s%n", "${jndi:x}", "<script>",
            "device:00000000-0000-0000-0000-000000000000", "grant-service",
        ]
        var text = ""
        for _ in 0..<Int.random(in: 1...(short ? 3 : 6), using: &random) { text += pieces.randomElement(using: &random)! }
        if !short, Int.random(in: 0..<8, using: &random) == 0 {
            text += String(repeating: "x", count: Int.random(in: 400...min(maxStringBytes, 5_000), using: &random))
        }
        return text
    }

    /// A JSON string literal that is not valid UTF-8 (or escapes a lone surrogate).
    private mutating func invalidUTF8String() -> Data {
        let bodies: [[UInt8]] = [
            [0xFF], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82],
            Array("\\ud800".utf8), Array("\\udfff\\ud800".utf8), Array("\\u0000".utf8), [0x00],
        ]
        return Data([0x22] + Array("x".utf8) + bodies.randomElement(using: &random)! + [0x22])
    }

    private mutating func hostileBytes() -> Data {
        Data((0..<Int.random(in: 0...40, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })
    }

    // MARK: Helpers

    static func key(_ id: UUID) -> Data { Data(id.uuidString.lowercased().utf8) }
    static func signer(_ device: UUID) -> String { "device:\(device.uuidString.lowercased())" }

    static func signed<P: Codable & Sendable>(_ schema: String, _ signer: String, _ payload: P, _ key: Ed25519.PrivateKey) -> Data {
        try! SignedMessage(schema: schema, signer: signer, payload: payload, key: key).encoded()
    }

    static func json(_ text: String) -> Data {
        try! JSONSerialization.data(withJSONObject: [text], options: .fragmentsAllowed).dropFirst().dropLast()
    }

    /// Every path to a leaf or container in `value` (object keys and array indices).
    static func paths(in value: Any, prefix: [String]) -> [[String]] {
        var result = prefix.isEmpty ? [] : [prefix]
        if let object = value as? [String: Any] {
            for (name, member) in object { result += paths(in: member, prefix: prefix + [name]) }
        } else if let array = value as? [Any] {
            for (index, member) in array.enumerated() { result += paths(in: member, prefix: prefix + ["\(index)"]) }
        }
        return result
    }

    static func replacing(_ path: ArraySlice<String>, in value: Any, with replacement: Any) -> Any {
        guard let head = path.first else { return replacement }
        if var array = value as? [Any], let index = Int(head) {
            array[index] = replacing(path.dropFirst(), in: array[index], with: replacement)
            return array
        }
        var object = value as! [String: Any]
        object[head] = replacing(path.dropFirst(), in: object[head]!, with: replacement)
        return object
    }
}
