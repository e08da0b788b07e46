import ArgumentParser
import Foundation

/// Shares (or re-shares) a family member.
struct GrantCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "grant",
        abstract: "Share a family member: wrap the current FMK from your key to theirs.",
        discussion: """
            Also re-grants after a revocation: the grantee gets the current FMK only, never an
            older one. Compare the printed verification code with theirs out of band.

            Example:
              rescind grant 6f1c… --to 93ab…
            """)
    @OptionGroup var profile: ProfileOptions
    @Argument(help: "Family member id.") var familyMember: UUID
    @Option(help: "The grantee's user id.") var to: UUID

    func run() async throws {
        let code = try await profile.session().grant(familyMember, to: to)
        print("granted; verification code \(code)")
    }
}
