import Foundation
import Testing

extension CLITests {
    /// `rescind-admin migrate kafka` against a broker with an Admin API (scripts/test.sh's Tansu pass):
    /// the five topics are created, verified on a second run, and drift fails the command.
    @Suite("rescind-admin migrate kafka") struct MigrateKafka {
        static let environment = ProcessInfo.processInfo.environment
        static var adminBroker: String? {
            guard ["1", "true", "yes", "on"].contains(environment["RESCIND_KAFKA_TOPICS_AUTO_CREATED"]?.lowercased() ?? "") == false
            else { return nil }
            return environment["RESCIND_KAFKA_BOOTSTRAP_SERVERS"].flatMap { $0.isEmpty ? nil : $0 }
        }

        @Test("on a broker that creates topics on first use there is nothing to do, and it says so")
        func autoCreatingBroker() async throws {
            let result = try await RescindProcess.admin(
                ["migrate", "kafka"],
                environment: ["RESCIND_KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:9", "RESCIND_KAFKA_TOPICS_AUTO_CREATED": "true"])
            #expect(result.status == 0 && result.stdout.contains("nothing to do"), "\(result)")
        }

        @Test(
            "creates the topics, verifies them again, and exits 2 on drift",
            .enabled(if: MigrateKafka.adminBroker != nil, "needs a broker with an Admin API (scripts/test.sh's Tansu pass)"),
            .timeLimit(.minutes(3)))
        func createsVerifiesAndReportsDrift() async throws {
            let prefix = "cli-migrate-\(UUID().uuidString.prefix(8).lowercased())."
            let kafka = [
                "RESCIND_KAFKA_BOOTSTRAP_SERVERS": try #require(Self.adminBroker), "RESCIND_TOPIC_PREFIX": prefix,
                "RESCIND_KAFKA_TOPIC_PARTITIONS": "2", "RESCIND_KAFKA_TOPIC_DEVICE_COMMANDS_PARTITIONS": "3",
                "RESCIND_KAFKA_TOPIC_RETENTION_MS": "86400000",
            ]
            let first = try await RescindProcess.admin(["migrate", "kafka"], environment: kafka, timeout: .seconds(90))
            #expect(first.status == 0, "\(first)")
            for topic in ["revocation_events", "access_events", "device_commands", "device_acks", "audit_notifications"] {
                #expect(first.stdout.contains("kafka: created \(prefix)\(topic)"), "\(first)")
            }

            let second = try await RescindProcess.admin(["migrate", "kafka", "--verify-only"], environment: kafka, timeout: .seconds(90))
            #expect(second.status == 0 && second.stdout.components(separatedBy: "up to date").count == 6, "\(second)")

            // The configuration now wants more partitions and another retention for device_commands.
            var drifted = kafka
            drifted["RESCIND_KAFKA_TOPIC_DEVICE_COMMANDS_PARTITIONS"] = "8"
            drifted["RESCIND_KAFKA_TOPIC_DEVICE_COMMANDS_RETENTION_MS"] = "3600000"
            let third = try await RescindProcess.admin(["migrate", "kafka"], environment: drifted, timeout: .seconds(90))
            #expect(third.status == 2, "\(third)")
            #expect(third.stderr.contains("drift: \(prefix)device_commands: 3 partitions, configured 8"), "\(third)")
            #expect(third.stderr.contains("drift: \(prefix)device_commands: retention.ms=86400000, configured 3600000"), "\(third)")
            #expect(!third.stderr.contains("\(prefix)device_acks"), "\(third)")

            // A bad setting names its variable.
            var wrong = kafka
            wrong["RESCIND_KAFKA_TOPIC_CLEANUP_POLICY"] = "forever"
            try await RescindProcess.admin(["migrate", "kafka"], environment: wrong).expectOneLineError("RESCIND_KAFKA_TOPIC_CLEANUP_POLICY")
        }
    }
}
