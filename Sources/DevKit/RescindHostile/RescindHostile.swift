import AuditService
import Foundation
import Logging
import RescindCrypto
import RescindKafka
import RescindObservability
import RescindPostgres
import RescindProtocol
import RescindTestSupport

/// `rescind-hostile`: the long run of the hostile-input property (docs/reliability.md). Starts the
/// audit service on a development Kafka cluster and the configured PostgreSQL, sends
/// `--per-topic` generated hostile envelopes (`HostileEnvelopes`) to each of its input topics
/// in rounds, and after every round waits until each message is accounted for (quarantined or
/// applied), then times a good message (a stall: not processed within 5 s). Prints per topic:
/// sent, quarantined, applied, stalls, crashes; and whether every audit chain verifies.
@main
struct RescindHostileCommand {
    static let usage = "usage: rescind-hostile [--per-topic N] [--round N] [--seed N] [--max-string-bytes N] [--only audit|agent]"

    static func main() async {
        RescindVersion.answerIfAsked()
        var perTopic = 10_000, round = 1_000, seed: UInt64 = 0x13_5EED, maxString = 900_000
        var only: String?
        var arguments = CommandLine.arguments.dropFirst()
        while let name = arguments.popFirst() {
            if name == "--only", let part = arguments.popFirst(), ["audit", "agent"].contains(part) {
                only = part
                continue
            }
            guard let text = arguments.popFirst(), let number = UInt64(text), number > 0 else {
                FileHandle.standardError.write(Data("\(usage)\n".utf8))
                exit(2)
            }
            switch name {
            case "--per-topic": perTopic = Int(number)
            case "--round": round = Int(number)
            case "--seed": seed = number
            case "--max-string-bytes": maxString = Int(number)
            default:
                FileHandle.standardError.write(Data("\(usage)\n".utf8))
                exit(2)
            }
        }
        // The in-process service logs each rejection at warning; the figures are the output.
        setenv("RESCIND_TEST_LOG_LEVEL", "critical", 0)
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .critical
            return handler
        }
        do {
            var failed = false
            if only != "agent" {
                failed = try await HostileRun(perTopic: perTopic, round: round, seed: seed, maxStringBytes: maxString).run()
            }
            if only != "audit" {
                print("\nrescind-hostile: device_commands through an enrolled agent, seed \(seed)")
                let figures = try await AgentHostileRun(count: perTopic, round: round, seed: seed, maxStringBytes: maxString).run()
                print("")
                print("| topic | sent | quarantined | applied | stalls | crashes |")
                print("|---|---:|---:|---:|---:|---:|")
                print("| `device_commands` | \(figures.sent) | \(figures.quarantined) | \(figures.applied) | \(figures.stalls) | \(figures.crashes) |")
                print("")
                print("refused by reason: " + figures.reasons.sorted { $0.value > $1.value }.map { "\($0.key.dropFirst(9)) \($0.value)" }.joined(separator: ", "))
                failed = failed || figures.stalls > 0 || figures.crashes > 0
            }
            exit(failed ? 1 : 0)
        } catch {
            FileHandle.standardError.write(Data("rescind-hostile: \(error)\n".utf8))
            exit(1)
        }
    }
}
