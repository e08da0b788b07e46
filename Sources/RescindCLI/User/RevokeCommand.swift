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
            revokes the user from every family member you own.

            With --everywhere --stolen (a device of theirs was lost or stolen), also re-grants them
            at the new FMK versions once they have rotated their identity keys on a device they
            still have (`rescind identity rotate`, after `rescind device retire D`): nothing is
            ever wrapped to keys the stolen device held. The plan is kept in the profile, so the
            command is safe to run again after a failure and finishes what is left; it prints
            what is done and what is left. Before re-granting it asks you to compare the
            verification code of their new keys with the one their device shows (--code).
            If they lost every device that held their identity key (so they cannot rotate it),
            they register a new identity (`rescind identity create`) and --regrant-to names it.

            Examples:
              rescind revoke 6f1c… --user 93ab… --reason "custody change"
              rescind revoke --everywhere --user 93ab… --reason "left the household"
              rescind revoke --everywhere --stolen --user 93ab… --reason "phone stolen"
              rescind revoke --everywhere --stolen --user 93ab… --code 3F-A2-7C
              rescind revoke --everywhere --stolen --user 93ab… --regrant-to 51c0… --code 3F-A2-7C
            """)
    @OptionGroup var profile: ProfileOptions
    @Argument(help: "Family member id (omit with --everywhere).") var familyMember: UUID?
    @Option(help: "The user to revoke.") var user: UUID
    @Option(help: "Why (kept in the audit log).") var reason: String?
    @Flag(help: "Every family member you own.") var everywhere = false
    @Flag(help: "A device of theirs was stolen: re-grant them after they rotate their identity keys (with --everywhere).")
    var stolen = false
    @Option(help: "With --stolen: the verification code their device shows for their new keys (`rescind identity code --with <you>`).")
    var code: String?
    @Option(help: "With --stolen, when they lost every device holding their keys: their new identity, to re-grant instead.")
    var regrantTo: UUID?
    @Option(help: "Records per upload request.") var batchSize = 500

    func validate() throws {
        guard everywhere == (familyMember == nil) else {
            throw ValidationError("give a family member id, or --everywhere (not both)")
        }
        guard (1...5000).contains(batchSize) else { throw ValidationError("--batch-size must be 1…5000") }
        guard !stolen || everywhere else { throw ValidationError("--stolen goes with --everywhere") }
        guard code == nil || stolen else { throw ValidationError("--code goes with --stolen") }
        guard regrantTo == nil || stolen else { throw ValidationError("--regrant-to goes with --stolen") }
    }

    func run() async throws {
        let session = try await profile.session()
        if stolen { return try await recover(session) }
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

    /// The stolen-device flow: revoke everywhere, then re-grant to rotated keys; resumable.
    private func recover(_ session: UserSession) async throws {
        let planPath = profile.directory + "/stolen-device-\(user.uuidString.lowercased()).json"
        var recovery: StolenDeviceRecovery
        if let data = FileManager.default.contents(atPath: planPath) {
            recovery = try CanonicalJSON.decode(StolenDeviceRecovery.self, from: data)
            if let regrantTo, recovery.regrantTo != regrantTo {
                throw CLIError("a recovery for \(user.uuidString.lowercased()) is in progress with another --regrant-to (\(planPath))")
            }
            print("resuming the recovery begun for \(user.uuidString.lowercased())")
        } else {
            recovery = try await session.beginStolenDeviceRecovery(user: user, regrantTo: regrantTo, reason: reason)
        }
        let bar = ProgressBar(label: "re-encrypting")
        let steps = try await session.advance(&recovery, confirmedCode: code, progress: bar.update) { plan in
            // Ids and versions only (no key material); replaced atomically so a kill leaves the old or the new plan.
            try CanonicalJSON.encode(plan).write(to: URL(fileURLWithPath: planPath), options: .atomic)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: planPath)
        }
        for step in steps {
            switch step {
            case .revoked(let member, let version, let records, _):
                print("revoked from \(member.uuidString.lowercased()): FMK v\(version), \(records) records re-encrypted")
            case .alreadyRevoked(let member):
                print("revoked from \(member.uuidString.lowercased()) (by the earlier run)")
            case .regranted(let member, let version, let code):
                let to = recovery.regrantTo.map { "their new identity \($0.uuidString.lowercased())" } ?? "their new keys"
                print("re-granted \(member.uuidString.lowercased()) at FMK v\(version) to \(to); verification code \(code)")
            case .confirmNewKeys(let generation, let code):
                let what = recovery.regrantTo.map { "their new identity \($0.uuidString.lowercased()) is registered" }
                    ?? "they rotated their identity keys (generation \(generation))"
                print("""
                    \(what). Ask them to run \
                    `rescind identity code --with \(session.keys.userID.uuidString.lowercased())` on their own device: \
                    if it shows \(code), run this command again with --code \(code); if not, someone else rotated \
                    their keys — do not re-grant.
                    """)
            case .waitingForRotation(let generation):
                print("""
                    waiting: their identity keys are still generation \(generation), the ones the stolen device held. \
                    They run `rescind device retire D` and `rescind identity rotate` on a device they still have \
                    (or, if they have none, `rescind identity create` and you add --regrant-to NEW_USER); \
                    then run this command again to re-grant.
                    """)
            }
        }
        if recovery.familyMembers.isEmpty {
            print("nothing to do: this user has no access to any family member you own")
        }
        print("done: revoked \(recovery.revoked.count)/\(recovery.familyMembers.count), re-granted \(recovery.regranted.count)/\(recovery.familyMembers.count)")
        if recovery.isFinished {
            try? FileManager.default.removeItem(atPath: planPath)
        } else {
            print("left: \(recovery.leftToRevoke.count) to revoke, \(recovery.leftToRegrant.count) to re-grant (plan kept in \(planPath))")
        }
    }
}
