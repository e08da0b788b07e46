import ArgumentParser
import Foundation
import RescindClient
import RescindProtocol

/// Revokes a user's access, re-encrypting every record under a new FMK.
struct RevokeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revoke",
        abstract: "Revoke a user: new FMK, every record re-encrypted and uploaded, one atomic commit.",
        discussion: """
            Shows a live progress bar of records re-encrypted and uploaded. With --everywhere,
            revokes the user from every family member you own (stolen device).

            Examples:
              rescind revoke 6f1c… --user 93ab… --reason "custody change"
              rescind revoke --everywhere --user 93ab… --reason "device stolen"
            """)
    @OptionGroup var profile: ProfileOptions
    @Argument(help: "Family member id (omit with --everywhere).") var familyMember: UUID?
    @Option(help: "The user to revoke.") var user: UUID
    @Option(help: "Why (kept in the audit log).") var reason: String?
    @Flag(help: "Every family member you own.") var everywhere = false
    @Option(help: "Records per upload request.") var batchSize = 500

    func validate() throws {
        guard everywhere == (familyMember == nil) else {
            throw ValidationError("give a family member id, or --everywhere (not both)")
        }
        guard (1...5000).contains(batchSize) else { throw ValidationError("--batch-size must be 1…5000") }
    }

    func run() async throws {
        let session = try await profile.session()
        let bar = ProgressBar(label: "re-encrypting")
        let committed: [RevocationCommitted]
        if let familyMember {
            committed = [try await session.revoke(familyMember, user: user, reason: reason, uploadBatchSize: batchSize, progress: bar.update)]
        } else {
            committed = try await session.revokeEverywhere(user: user, reason: reason, progress: bar.update)
        }
        for revocation in committed {
            print("""
                revoked from \(revocation.familyMemberID.uuidString.lowercased()): FMK v\(revocation.newFMKVersion), \
                \(revocation.recordsReencrypted) records re-encrypted, \(revocation.devicesNotified) devices notified \
                (event \(revocation.eventID.uuidString.lowercased()))
                """)
        }
    }
}
