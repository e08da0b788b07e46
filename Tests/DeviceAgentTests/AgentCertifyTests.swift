import Foundation
import RescindClient
import RescindProtocol
import RescindTestSupport
import Testing

@testable import DeviceAgent

/// `rescind-agent certify`: the recovery words certify the agent's own device key, so that its
/// approval of an operation begun on another certified device makes it immediate.
@Suite("A certified agent's approval counts at once", .serialized)
struct AgentCertifyTests {
    /// Adult A's iPad runs the agent. Words that are not A's certify nothing; A's words do. A
    /// rotation A then begins on the phone (certified when the identity was made) is applied the
    /// moment the iPad approves it.
    @Test(.timeLimit(.minutes(2)))
    func theWordsCertifyTheAgentAndItsApprovalIsImmediate() async throws {
        try await GrantServiceHarness.with { service in
            let phone = try await service.user("Adult A")
            let iPad = try await AgentTestKit.enrol(phone, on: service, name: "Adult A's iPad")
            try await service.ageEnrolments(of: phone.keys.userID)
            let environment = AgentProcess.environment(iPad.configuration)
            let paper = FileManager.default.temporaryDirectory.appendingPathComponent("rescind-words-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: paper, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: paper) }
            let words = paper.appendingPathComponent("words.txt"), others = paper.appendingPathComponent("others.txt")
            try TestRecovery.key(for: phone.keys.userID).words.joined(separator: " ").write(to: words, atomically: true, encoding: .utf8)
            try RecoveryKey.generate().words.joined(separator: " ").write(to: others, atomically: true, encoding: .utf8)

            let (refusedStatus, refused) = try await AgentProcess.run(["certify", "--words-file", others.path], environment: environment)
            #expect(refusedStatus != 0 && refused.contains("bad_signature"), "\(refused)")
            let (status, certified) = try await AgentProcess.run(["certify", "--words-file", words.path], environment: environment)
            #expect(status == 0 && certified.contains("certified by the recovery key"), "\(certified)")

            let begun = try await phone.registerRotation(to: UserKeys.generate(userID: phone.keys.userID), currentGeneration: 1)
            let (approvedStatus, approved) = try await AgentProcess.run(["approve", begun.operationID.text], environment: environment)
            #expect(approvedStatus == 0 && approved.contains("\(begun.operationID.text) applied"), "\(approved)")
        }
    }
}
