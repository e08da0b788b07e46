import ArgumentParser
import Foundation
import RescindClient
import RescindProtocol

#if canImport(Glibc)
import Glibc
#endif

/// Revokes a user's access, re-encrypting every record under a new FMK.
struct RevokeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revoke",
        abstract: "Revoke a user: new FMK, every record re-encrypted and uploaded, one atomic commit.",
        discussion: """
            First shows what will happen — who loses access, how many records will be re-encrypted,
            which devices will be told to erase and which to rotate, and what revocation cannot do —
            and asks for confirmation on the terminal; --yes skips the question (without a terminal,
            --yes is required). Then shows a live progress bar of records re-encrypted and uploaded.
            With --everywhere, revokes the user from every family member you own.

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
              rescind revoke 6f1c… --user 93ab… --yes
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
    @Flag(help: "Do not ask for confirmation (required without a terminal).") var yes = false

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
        // Nothing is read or changed before this: a script that forgot --yes learns it at once.
        if !stolen { try Self.requireConfirmationPossible(yes) }
        let session = try await profile.session()
        if stolen { return try await recover(session) }
        try await confirm(session)
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
            try Self.requireConfirmationPossible(yes)
            try await confirm(session)
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

    /// Without a terminal to ask on, only --yes lets a revocation go ahead.
    static func requireConfirmationPossible(_ yes: Bool) throws {
        guard yes || isatty(STDIN_FILENO) == 1 else {
            throw CLIError("not revoked: no terminal to confirm on; run again with --yes to revoke without asking")
        }
    }

    /// Prints what the revocation will do and cannot do, then asks (unless --yes).
    private func confirm(_ session: UserSession) async throws {
        let previews = try await session.revocationPreviews(user: user, familyMember: familyMember)
        // Nothing to revoke (not a grantee anywhere): the service's own refusal says so.
        guard let first = previews.first else { return }
        // Written straight to the file descriptor: the question appears after the preview, at once.
        FileHandle.standardOutput.write(Data((Self.describe(previews, revokedName: first.revokedUserDisplayName) + "\n").utf8))
        if yes { return }
        FileHandle.standardOutput.write(Data("Revoke \(first.revokedUserDisplayName)? [y/N] ".utf8))
        let answer = readLine()?.trimmingCharacters(in: .whitespaces).lowercased()
        guard answer == "y" || answer == "yes" else { throw CLIError("not revoked: nothing changed") }
    }

    /// The preview, as the person revoking reads it.
    static func describe(_ previews: [RevocationPreview], revokedName name: String) -> String {
        let userID = previews[0].revokedUserID.uuidString.lowercased()
        let records = previews.reduce(0) { $0 + $1.recordCount }
        var lines = [
            "\(name) (user \(userID)) will lose access to \(previews.count) family member(s); "
                + "\(records) record(s) will be re-encrypted under a new key:"
        ]
        for preview in previews {
            lines.append("  family member \(preview.familyMemberID.uuidString.lowercased()): \(preview.recordCount) record(s)")
            for device in preview.devices {
                let what = device.action == .secureDeletion ? "erase " : "rotate"
                lines.append(
                    "    \(what) \(device.name) (device \(device.deviceID.uuidString.lowercased()), \(device.userDisplayName))")
            }
            if !preview.devices.contains(where: { $0.action == .secureDeletion }) {
                lines.append("    no agent device of \(name)'s to erase")
            }
        }
        lines.append("\(name)'s interactive devices (the rescind CLI) hold no keys or records and are refused at once.")
        lines.append("What revocation cannot do:")
        lines.append("  - take back what \(name) already saw, copied or exported (plaintext, screenshots, backups);")
        lines.append("  - erase a device that never comes back online, or whose agent was tampered with: it keeps the")
        lines.append("    records it had and the old key (`rescind revocation E` shows it as overdue).")
        return lines.joined(separator: "\n")
    }
}
