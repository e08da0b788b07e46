import Foundation
import RescindClient
import RescindCrypto
import RescindPostgres
import RescindProtocol
import RescindTestSupport
import Testing

@testable import DeviceAgent

#if canImport(Glibc)
import Glibc
#endif

/// Receipts from real agents: a locked agent, which holds no device key, says
/// `not_now` with its certified receipt key; an unlocked one says `delivered`; the audit service
/// shows both, and refuses the receipt key for an answer.
extension LockedProcessTests {
    @Test("a locked agent shows not_now, a thief's copy of its receipt key answers nothing, applied after the unlock; an unlocked agent shows delivered")
    func receiptsFromLockedAndUnlockedAgents() async throws {
        try await RevocationScenario.with(interactiveRegistrations: true, records: ["receipt note: unmistakable-plaintext"]) {
            service, s in
            try await AuditServiceHarness.with(auditing: service) { audit in
                // Both filled once while unlocked (which makes and certifies the receipt key); the
                // kept device then runs locked, the revoked one unlocked.
                for device in [s.kept, s.revoked] {
                    let (status, output) = try await AgentProcess.run(["sync"], environment: AgentProcess.environment(device.configuration))
                    #expect(status == 0, "\(output)")
                }
                let passphrase = try s.kept.directory.write("passphrase", Data((AgentTestKit.passphrase + "\n").utf8))
                let locked = try AgentProcess(
                    ["run", "--locked"],
                    environment: AgentProcess.environment(s.kept.configuration, unlock: ["RESCIND_AGENT_PASSPHRASE_FILE": passphrase]))
                let unlocked = try AgentProcess(["run"], environment: AgentProcess.environment(s.revoked.configuration))
                try await locked.waitFor("lock control ready")
                for process in [locked, unlocked] { try await process.waitFor("partitions assigned") }

                let committed = try await s.owner.revoke(s.member.id, user: s.revokedUser.keys.userID)
                func state(_ device: AgentTestKit.Device) async throws -> String? {
                    try await audit.withConnection { connection in
                        try await connection.query(
                            """
                            SELECT state FROM revocation_devices
                            WHERE event_id = \(committed.eventID) AND device_id = \(device.deviceID)
                            """
                        ).first?.decode(String.self, column: 0)
                    }
                }
                func history(_ device: AgentTestKit.Device) async throws -> [String] {
                    try await audit.withConnection { connection in
                        try await connection.query(
                            """
                            SELECT outcome FROM device_acks WHERE event_id = \(committed.eventID) AND device_id = \(device.deviceID)
                            ORDER BY acked_at
                            """
                        ).map { try $0.decode(String.self, column: 0) }
                    }
                }
                try await AgentTestKit.eventually("the locked device shows not_now, the unlocked one applied") {
                    let kept = try await state(s.kept), revoked = try await state(s.revoked)
                    return kept == "not_now" && revoked == "applied"
                }
                #expect(try await history(s.revoked) == ["delivered", "applied"])
                #expect(try await history(s.kept) == ["not_now"])

                // The thief copied the locked device's data directory: the receipt key and its
                // certificate are there in the clear (the device key is not). It answers for the
                // device with them, as `applied` and as `healed`.
                let stolen = try #require(
                    ReceiptKeyFile.load(dataDirectory: s.kept.configuration.dataDirectory, deviceID: s.kept.deviceID))
                let forged = try [DeviceAck.Outcome.applied, .healed].map { outcome in
                    let ack = DeviceAck(
                        ackID: UUID(), commandID: UUID(), eventID: committed.eventID, deviceID: s.kept.deviceID,
                        action: .fmkRotation, outcome: outcome, recordsProcessed: 1, fmkVersion: 2, durationMs: 5, error: nil,
                        ackedAt: Timestamp.truncated(Date()), receiptCertificate: stolen.certificate)
                    return try SignedMessage(
                        schema: DeviceAck.schema, signer: ReceiptKeyCertificate.receiptSigner(s.kept.deviceID), payload: ack,
                        key: stolen.key
                    ).encoded()
                }
                try await AgentTestKit.publish(service, .deviceAcks, key: s.kept.deviceID, values: forged)
                try await AgentTestKit.eventually("both forged answers refused") {
                    try await audit.withConnection { connection in
                        try await connection.query(
                            """
                            SELECT count(*) FROM rejected_messages
                            WHERE reason = 'receipt_key_for_answer' AND device_id = \(s.kept.deviceID)
                            """
                        ).first!.decode(Int.self, column: 0)
                    } == 2
                }
                #expect(try await state(s.kept) == "not_now")
                #expect(try await history(s.kept) == ["not_now"])

                // The owner unlocks the phone: the sealed rotation runs and its answer is signed.
                locked.signal(SIGUSR2)
                try await locked.waitFor("agent unlocked")
                try await AgentTestKit.eventually("applied after the unlock, and the revocation completes") {
                    let completed = try await audit.withConnection { connection in
                        try await connection.query(
                            "SELECT completed_at IS NOT NULL FROM revocations WHERE event_id = \(committed.eventID)"
                        ).first?.decode(Bool.self, column: 0) == true
                    }
                    return try await state(s.kept) == "applied" && completed
                }
                #expect(try await history(s.kept) == ["not_now", "applied"])
                try await AgentTestKit.eventually("one receipt and one answer sent, both marked") {
                    let status = try await AgentStatus.read(configuration: s.kept.configuration)
                    return status.counters["receipts_sent"] == 1 && status.sentAcks == 1 && status.owedReceipts + status.owedAcks == 0
                }
                for process in [locked, unlocked] {
                    process.signal(SIGTERM)
                    #expect(try await process.exitStatus() == 0)
                }
            }
        }
    }
}
