import ArgumentParser
import Foundation
import RescindClient
import RescindProtocol

/// Rotates family members' FMKs revoking nobody: the owner's own device was stolen.
struct RotateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rotate",
        abstract: "Rotate a family member's FMK revoking nobody: new FMK, every record re-encrypted, every holder re-wrapped.",
        discussion: """
            For a stolen device of yours as an owner: it held the FMK of every family member you
            own and your identity key. A rotation moves a family member to a new FMK version
            (every record re-encrypted and uploaded in batches, one atomic commit; an edit made
            meanwhile is never lost), re-wraps the new FMK for everyone who holds it now, signs a
            `rotate` key statement with your identity key, and tells every holder's agent devices
            to rotate. Nobody loses access; nothing written or re-encrypted afterwards opens with
            a key the stolen device held.

            Rotate your identity keys first (`rescind device retire D`, then `rescind identity
            rotate` on a device you still have): a rotation signed and wrapped with keys the
            thief holds protects nothing. With --everywhere --stolen-device D the command does it
            in order and checks it: it retires D if it is not yet retired, waits until your
            identity keys were rotated after the retirement, then rotates every family member
            you own. The plan is kept in the profile, so the command is safe to run again after
            a failure and finishes what is left; it prints what is done and what is left. It
            retires only D and lists your other active devices: retire any you do not recognise
            (the thief may have enrolled one with your identity key before D was retired).
            Such a device cannot touch this command's rotations (a rotation belongs to the
            device that began it), and retiring it abandons at once any revocation or rotation
            it began.

            What it cannot do: take back what the stolen device already decrypted, or the old
            FMKs it holds (they open only what was encrypted before the rotation). Your own agent
            devices take the new version once they have your new keys (`rescind-agent
            update-identity --bundle F`).

            Examples:
              rescind rotate 6f1c… --reason "my phone was stolen"
              rescind rotate --everywhere --stolen-device 0c7d… --reason "phone stolen"
            """)
    @OptionGroup var profile: ProfileOptions
    @Argument(help: "Family member id (omit with --everywhere).") var familyMember: UUID?
    @Flag(help: "Every family member you own (with --stolen-device).") var everywhere = false
    @Option(help: "With --everywhere: your stolen device, retired first if it is not yet.") var stolenDevice: UUID?
    @Option(help: "Why (kept in the audit log).") var reason: String?
    @Option(help: "Records per upload request.") var batchSize = 500

    func validate() throws {
        guard everywhere == (familyMember == nil) else {
            throw ValidationError("give a family member id, or --everywhere (not both)")
        }
        guard everywhere == (stolenDevice != nil) else { throw ValidationError("--everywhere goes with --stolen-device D") }
        guard (1...5000).contains(batchSize) else { throw ValidationError("--batch-size must be 1…5000") }
    }

    func run() async throws {
        let session = try await profile.session()
        let bar = ProgressBar(label: "re-encrypting")
        if let familyMember {
            let committed = try await session.rotate(familyMember, reason: reason, uploadBatchSize: batchSize, progress: bar.update)
            print(Self.line(committed.familyMemberID, committed.newFMKVersion, committed.recordsReencrypted, committed.devicesNotified))
            return
        }
        guard let stolenDevice else { return }
        let planPath = profile.directory + "/stolen-own-device-\(stolenDevice.uuidString.lowercased()).json"
        var recovery: OwnerStolenDeviceRecovery
        if let data = FileManager.default.contents(atPath: planPath) {
            recovery = try CanonicalJSON.decode(OwnerStolenDeviceRecovery.self, from: data)
            print("resuming the rotation begun for device \(stolenDevice.uuidString.lowercased())")
        } else {
            recovery = OwnerStolenDeviceRecovery(deviceID: stolenDevice, reason: reason)
        }
        // Only D is retired: a device the thief enrolled with the identity key keeps its token.
        let others = try await session.client.devices().filter {
            $0.retiredAt == nil && $0.deviceID != stolenDevice && $0.deviceID != session.deviceID
        }
        if !others.isEmpty {
            print("""
                your other active devices (retire any you do not recognise with `rescind device retire D`; \
                retiring one also abandons at once any revocation or rotation it began):
                """)
            for device in others { print("  \(device.deviceID.uuidString.lowercased())  \(device.name)") }
        }
        let steps: [OwnerStolenDeviceRecovery.Step]
        do {
            steps = try await session.advance(&recovery, uploadBatchSize: batchSize, progress: bar.update) { plan in
                // Ids and versions only (no key material); replaced atomically so a kill leaves the old or the new plan.
                try CanonicalJSON.encode(plan).write(to: URL(fileURLWithPath: planPath), options: .atomic)
                try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: planPath)
            }
        } catch let refusal as OwnerStolenDeviceRecovery.Refusal {
            throw CLIError("not rotated: \(refusal.description)")
        }
        for step in steps {
            switch step {
            case .retired(let device):
                print("retired device \(device.uuidString.lowercased()): its tokens and open challenges are dead")
            case .waitingForIdentityRotation:
                print("""
                    waiting: your identity keys were not rotated since the device was retired, so it may hold them. \
                    Run `rescind identity rotate` on a device you still have (this profile's keys are then the new ones), \
                    then run this command again.
                    """)
            case .rotated(let member, let version, let records, _):
                print(Self.line(member, version, records, nil))
            case .alreadyRotated(let member, let version):
                print("rotated \(member.uuidString.lowercased()): at FMK v\(version) already (by the earlier run, or a revocation since)")
            }
        }
        print("done: rotated \(recovery.rotated.count)/\(recovery.familyMembers.count)")
        if recovery.isFinished {
            try? FileManager.default.removeItem(atPath: planPath)
        } else if recovery.planned || steps.contains(.waitingForIdentityRotation) {
            print("left: \(recovery.leftToRotate.count) to rotate (plan kept in \(planPath))")
            try CanonicalJSON.encode(recovery).write(to: URL(fileURLWithPath: planPath), options: .atomic)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: planPath)
        }
    }

    static func line(_ member: UUID, _ version: Int, _ records: Int, _ devices: Int?) -> String {
        "rotated \(member.uuidString.lowercased()): FMK v\(version), \(records) records re-encrypted"
            + (devices.map { ", \($0) devices notified" } ?? "") + ", nobody revoked"
    }
}
