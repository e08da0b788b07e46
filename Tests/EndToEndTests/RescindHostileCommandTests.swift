import Foundation
import RescindDevKit
import Testing

/// The short variant of `rescind-hostile`, run as the command it is: generated hostile messages
/// on the audit service's three input topics and on `device_commands` to an enrolled agent, each
/// round followed by a genuine message that must still get through. The command starts its
/// services through the test harnesses, so it reaches them as every client of the suite does
/// (HTTPS with the stack's CA); a probe or an agent that did not would report a false crash.
@Suite(.serialized)
struct RescindHostileCommandTests {
    static let binaries = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    static let topics = ["revocation_events", "access_events", "device_acks", "device_commands"]

    @Test("a short hostile run: every message accounted for, no stall, no crash, every chain verifies", .timeLimit(.minutes(3)))
    func shortHostileRun() async throws {
        let command = Self.binaries.appendingPathComponent("rescind-hostile")
        try #require(FileManager.default.isExecutableFile(atPath: command.path), "build the products first (swift build)")
        let result = try await ChildProcess.run(
            command, ["--per-topic", "60", "--round", "30", "--seed", "7"], timeout: .seconds(150))
        let output = result.output
        #expect(result.status == 0, "rescind-hostile failed (status \(result.status)):\n\(output.suffix(6000))")

        let rows = output.split(separator: "\n").filter { $0.hasPrefix("| `") }
        for topic in Self.topics {
            let row = try #require(rows.first { $0.hasPrefix("| `\(topic)` |") }, "no row for \(topic):\n\(output)")
            // | topic | sent | quarantined | applied | stalls | crashes |
            let cells = row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            #expect(cells.count == 6, "\(row)")
            guard cells.count == 6, let sent = Int(cells[1]), let quarantined = Int(cells[2]), let applied = Int(cells[3]) else {
                continue
            }
            #expect(sent == 60 && quarantined + applied == sent, "\(row)")
            #expect(quarantined > 0, "nothing of \(topic)'s hostile messages was quarantined: \(row)")
            #expect(cells[4] == "0" && cells[5] == "0", "a stall or a crash: \(row)")
        }
        let health = try #require(output.split(separator: "\n").first { $0.hasPrefix("audit chains verified: ") })
        #expect(health.hasSuffix("/health 200, /ready 200"), "\(health)")
        let counts = health.dropFirst("audit chains verified: ".count).split(separator: ";")[0].split(separator: " ")
        #expect(counts.count == 3 && counts[0] == counts[2] && Int(counts[0]) ?? 0 > 0, "\(health)")
    }
}
