import Foundation
import RescindCrypto
import RescindKafka
import RescindProtocol

/// One human-readable line for a Kafka message of Rescind.
struct MessageLine {
    let text: String

    init(_ message: KafkaMessage, verifyingWith key: Ed25519.PublicKey?) {
        let value = message.value ?? Data()
        let place = "\(message.topic)[\(message.partition)]@\(message.offset)"
        let time = message.timestamp.map(Timestamp.format) ?? "-"
        let schema = SignedEnvelope.claimedSchema(value) ?? "?"
        text = "\(time) \(place) \(Self.summary(value, schema: schema, key: key))"
    }

    static func summary(_ value: Data, schema: String, key: Ed25519.PublicKey?) -> String {
        func describe<P: Codable & Sendable>(_ type: P.Type, _ line: (P) -> String) -> String {
            guard let message = try? SignedMessage<P>.decode(value, schema: schema) else { return "malformed \(schema)" }
            let mark = key.map { (try? message.verify(key: $0)) != nil ? "✓" : "✗" } ?? " "
            return "\(mark) \(message.signer): \(line(message.payload))"
        }
        func short(_ id: UUID) -> String { String(id.uuidString.lowercased().prefix(8)) }
        switch schema {
        case RevocationEvent.schema:
            return describe(RevocationEvent.self) {
                ($0.revokedUserID.map { "revocation of user \(short($0))" } ?? "rotation (nobody revoked)")
                    + " from \(short($0.familyMemberID)) → FMK v\($0.newFMKVersion), "
                    + "\($0.recordsReencrypted) records, \($0.expectedDevices.count) devices"
            }
        case AccessEvent.schema:
            return describe(AccessEvent.self) {
                "\($0.kind.rawValue) on \(short($0.familyMemberID)) by \(short($0.actorUserID))"
                    + ($0.targetUserID.map { " for \(short($0))" } ?? "") + " (FMK v\($0.fmkVersion))"
            }
        case DeviceCommand.schema:
            return describe(DeviceCommand.self) {
                "\($0.action.rawValue) → device \(short($0.deviceID)) for \(short($0.familyMemberID)) v\($0.newFMKVersion)"
            }
        case DeviceAck.schema:
            return describe(DeviceAck.self) {
                "\($0.outcome.rawValue) \($0.action.rawValue) by device \(short($0.deviceID)): \($0.recordsProcessed) records, "
                    + "v\($0.fmkVersion), \($0.durationMs) ms" + ($0.error.map { " — \($0)" } ?? "")
            }
        case KeyChainViolation.schema:
            return describe(KeyChainViolation.self) {
                "key chain violation \($0.code.rawValue) on \(short($0.familyMemberID)) by device \(short($0.reporterDeviceID))"
                    + ($0.offeredFMKVersion.map { ", offered v\($0)" } ?? "") + " — \($0.detail)"
            }
        case GovernanceNotice.schema:
            return describe(GovernanceNotice.self) {
                let subject = $0.operationID.map { "operation \(short($0))" } ?? $0.subjectDeviceID.map { "device \(short($0))" } ?? "?"
                let by = $0.actorDeviceID.map { "device \(short($0))" } ?? $0.decidedBy?.rawValue ?? "?"
                return "governance \($0.change.rawValue) of user \(short($0.userID)): \(subject) \($0.state.rawValue) by \(by)"
                    + ($0.deviceID.map { " → device \(short($0))" } ?? "") + ($0.audience.map { " (\($0.rawValue))" } ?? "")
            }
        default:
            return "\(schema) (\(value.count) bytes)"
        }
    }
}
