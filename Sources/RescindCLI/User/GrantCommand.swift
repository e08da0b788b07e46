import ArgumentParser
import Foundation
import RescindProtocol

/// Shares (or re-shares) a family member.
struct GrantCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "grant",
        abstract: "Share a family member: wrap the current FMK from your key to theirs.",
        discussion: """
            Also re-grants after a revocation: the grantee gets the current FMK only, never an
            older one. Compare the printed verification code with theirs out of band (or invite
            them in person instead: `rescind invite`).

            Their keys are pinned the first time; if the grant service later shows other keys
            for them (a rotation signed with their old key included: a thief holding it can sign
            one too), the grant is refused and reported until you compared codes and ran
            `rescind identity trust U --code C`.

            Example:
              rescind grant 6f1c… --to 93ab…
            """)
    @OptionGroup var profile: ProfileOptions
    @Argument(help: "Family member id.") var familyMember: UUID
    @Option(help: "The grantee's user id.") var to: UUID

    func run() async throws {
        let session = try await profile.session()
        let firstMeeting = session.pins[to] == nil
        let code = try await session.grant(familyMember, to: to)
        print("granted; verification code \(code)")
        if firstMeeting {
            FileHandle.standardError.write(
                Data("first grant to \(to.uuidString.lowercased()): their keys are now pinned; compare this code with theirs\n".utf8))
        }
    }
}
