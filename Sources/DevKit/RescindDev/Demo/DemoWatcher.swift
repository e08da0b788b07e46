import Foundation
import Logging
import RescindKafka
import RescindProtocol

/// Follows `device_acks` and `audit_notifications` while the demo plays and puts
/// what each agent and the audit service did on the timeline.
struct DemoWatcher: Sendable {
    let bootstrapServers: String
    let topicPrefix: String
    let timeline: DemoTimeline

    func run() async {
        var logger = Logger(label: "rescind.demo.watcher")
        logger.logLevel = .critical
        let topics = [Topic.deviceAcks, .auditNotifications].map { topicPrefix + $0.rawValue }
        guard let consumer = try? KafkaConsumer(
            configuration: KafkaConsumerConfiguration(
                bootstrapServers: bootstrapServers, clientID: "rescind-demo-watcher",
                additionalProperties: ["fetch.wait.max.ms": "20"]),
            subscription: .partitions(topics.flatMap { topic in
                (0..<4).map { KafkaPartitionAssignment(topic: topic, partition: $0, start: .beginning) }
            }),
            logger: logger)
        else { return timeline.log("demo", "cannot follow the topics; continuing without the live timeline") }
        await withTaskCancellationHandler {
            do {
                for try await message in consumer.messages {
                    guard let value = message.value else { continue }
                    if message.topic.hasSuffix(Topic.deviceAcks.rawValue) {
                        show(ack: value)
                    } else {
                        show(notification: value)
                    }
                }
            } catch {}
        } onCancel: {
            Task { await consumer.close() }
        }
    }

    private func show(ack value: Data) {
        guard let ack = try? SignedMessage<DeviceAck>.decode(value, schema: DeviceAck.schema).payload,
            ack.outcome != .delivered  // a receipt on the way to the answer: not worth a line
        else { return }
        let what = ack.action == .secureDeletion ? "erased" : "rotated to FMK v\(ack.fmkVersion)"
        let outcome = switch ack.outcome {
        case .applied: "\(what): \(ack.recordsProcessed) records in \(ack.durationMs) ms"
        case .alreadyApplied: "already applied (v\(ack.fmkVersion))"
        case .failed: "FAILED: \(ack.error ?? "unknown error")"
        case .healed: "healed (v\(ack.fmkVersion))"
        case .delivered: "delivered"
        case .notNow: "not now (locked)"
        }
        timeline.log(timeline.nameOf(ack.deviceID), "ack \(ack.action.rawValue) → \(outcome)")
    }

    /// A governance notice as the people watching read it: what, about whom, by whom, and its state.
    static func describe(_ notice: GovernanceNotice?, device: String, nameOf: (UUID) -> String) -> String {
        guard let notice else { return "governance notice" }
        let what = notice.change.rawValue.replacingOccurrences(of: "_", with: " ")
        let subject = notice.subjectDeviceID.map { " of \(nameOf($0))" } ?? ""
        let by = notice.actorDeviceID == nil ? (notice.decidedBy == .delay ? "the security delay" : "the recovery key") : device
        return notice.state == .pending
            ? "ALERT governance: \(what) begun by \(by), pending until \(notice.effectiveAt.map(Timestamp.format) ?? "?") unless vetoed"
            : "governance: \(what)\(subject) \(notice.state.rawValue) (\(by))"
    }

    private func show(notification value: Data) {
        guard let note = try? SignedMessage<AuditNotification>.decode(value, schema: AuditNotification.schema).payload else {
            return
        }
        let device = note.deviceID.map(timeline.nameOf) ?? "a device"
        let text = switch note.kind {
        case .revocationCompleted:
            "revocation complete on \(note.devices?.count ?? 0) devices; commit → last ack \(note.commitToLastAckMs ?? 0) ms"
        case .ackOverdue: "ALERT ack overdue from \(device)"
        case .ackFailed: "ALERT \(device) failed: \(note.error ?? "")"
        case .messageRejected: "rejected a message: \(note.rejection?.reason ?? "")"
        case .keyChainViolation where note.violation?.code == .unverifiedRecipientKey:
            "ALERT \(device) refused a recipient key: \(note.violation?.code.rawValue ?? "") — \(note.violation?.detail ?? "")"
        case .keyChainViolation:
            "ALERT \(device) refused a key history: \(note.violation?.code.rawValue ?? "") — \(note.violation?.detail ?? "")"
        case .governanceNotice:
            Self.describe(note.governance, device: device, nameOf: timeline.nameOf)
        }
        timeline.log("audit service", text)
    }
}
