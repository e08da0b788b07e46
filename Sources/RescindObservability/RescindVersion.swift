import Foundation

/// The version every Rescind executable reports (`--version`) and its metrics export
/// (`rescind_build_info{version="…"} 1`): one source for both.
///
/// A build from a checkout says `-dev`. An image build stamps it: deploy/Dockerfile's `VERSION`
/// build argument (e.g. `git describe --tags --always --dirty`) replaces the `current` line
/// below before compiling, so keep that line's shape.
public enum RescindVersion {
    public static let current = "0.1.0-dev"

    /// For an executable that reads its own arguments: `--version` alone prints `current` on
    /// standard output and ends the process with status 0, before any configuration is read.
    /// (ArgumentParser's commands get the same from `CommandConfiguration.version`.)
    public static func answerIfAsked(_ arguments: [String] = Array(CommandLine.arguments.dropFirst())) {
        guard arguments == ["--version"] else { return }
        print(current)
        exit(0)
    }
}
