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
            for them, the grant is refused until you compared codes and ran
            `rescind identity trust U --code C`.

            Example:
              rescind grant 6f1c… --to 93ab…
            """)
    @OptionGroup var profile: ProfileOptions
    @Argument(help: "Family member id.") var familyMember: UUID
    @Option(help: "The grantee's user id.") var to: UUID

    func run() async throws {
        let session = try await profile.session()
        var pins = try profile.identityPins()
        let grantee = try await session.client.user(to)
        switch pins.check(to, identity: grantee.identityPublicKey, agreement: grantee.agreementPublicKey) {
        case .changed(let pin) where pin.follows(to: grantee, through: try await session.client.identityRotations(of: to)):
            // The user rotated their keys with statements signed by the pinned key: follow them.
            try pins.pin(
                to, .init(identityPublicKey: grantee.identityPublicKey, agreementPublicKey: grantee.agreementPublicKey, source: pin.source))
            let code = try await session.grant(familyMember, to: to)
            print("granted; verification code \(code)")
            FileHandle.standardError.write(
                Data("\(grantee.displayName) rotated their keys (generation \(grantee.identityGeneration), signed by the pinned key): pinned the new keys\n".utf8))
        case .changed(let pin):
            throw CLIError(
                "the grant service shows other keys for \(grantee.displayName) than the ones pinned (\(pin.source.rawValue), "
                    + "\(Timestamp.format(pin.pinnedAt))): nothing was granted. Compare codes with them "
                    + "(`rescind identity code --with \(to.uuidString.lowercased())` on both sides), then "
                    + "`rescind identity trust \(to.uuidString.lowercased()) --code C`.")
        case .unpinned:
            try pins.pin(
                to, .init(identityPublicKey: grantee.identityPublicKey, agreementPublicKey: grantee.agreementPublicKey, source: .firstUse))
            let code = try await session.grant(familyMember, to: to)
            print("granted; verification code \(code)")
            FileHandle.standardError.write(
                Data("first grant to \(grantee.displayName): their keys are now pinned; compare this code with theirs\n".utf8))
        case .matches:
            let code = try await session.grant(familyMember, to: to)
            print("granted; verification code \(code)")
        }
    }
}
