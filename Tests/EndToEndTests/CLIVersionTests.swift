import Foundation
import RescindObservability
import Testing

extension CLITests {
    /// Every executable answers `--version` with `RescindVersion.current` alone, reading no
    /// configuration (the environment is empty): what an operator asks a container, and what a
    /// bug report quotes from the dev kit.
    @Suite("--version on every executable") struct Version {
        @Test(.timeLimit(.minutes(1)), arguments: [
            "rescind-grant-service", "rescind-audit-service", "rescind-agent", "rescind", "rescind-admin",
            "rescind-dev", "rescind-devbroker", "rescind-bench", "rescind-hostile", "rescind-fuzz",
        ])
        func printsTheVersionAlone(executable: String) async throws {
            try #require(RescindProcess.isBuilt)
            let url = RescindProcess.binary.deletingLastPathComponent().appendingPathComponent(executable)
            let result = try await RescindProcess.run(["--version"], environment: [:], executable: url)
            #expect(result.status == 0, "\(result)")
            #expect(result.stdout == RescindVersion.current + "\n" && result.stderr.isEmpty, "\(result)")
        }
    }
}
