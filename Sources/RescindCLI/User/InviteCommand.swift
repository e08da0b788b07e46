import ArgumentParser
import Foundation
import RescindClient
import RescindProtocol

/// Invitations (sharing ADR): handed over in person, they pin both sides' identity keys
/// without trusting the grant service with them.
struct InviteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "invite",
        abstract: "Invite someone in person: a signed, single-use invitation that pins both of your keys.",
        discussion: """
            1. You: `rescind invite create [F]` prints a token and its QR code; hand it over in
               person (show the QR code, read the token out). It works once, for seven days.
            2. They: `rescind invite accept TOKEN` checks the invitation was signed by you (the
               token carries your key's fingerprint, so the grant service cannot substitute
               someone else), pins your keys and prints a verification code.
            3. You: `rescind invite complete ID` checks their acceptance was signed with the token's
               one-time key, pins their keys, shares F if the invitation named one, and prints the
               same verification code. Compare the two codes.

            Example:
              rescind invite create 6f1c…          # you
              rescind invite accept rescind-invite:…  # them
              rescind invite complete 0d4e…        # you
            """,
        subcommands: [Create.self, Accept.self, Complete.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create an invitation; prints the token and its QR code (shown once, never stored).",
            discussion: """
                Example:
                  rescind invite create 6f1c…      # share family member 6f1c… once accepted
                  rescind invite create --days 2   # just pin each other's keys, valid two days
                """)
        @OptionGroup var profile: ProfileOptions
        @Argument(help: "A family member to share once the invitation is accepted (yours).") var familyMember: UUID?
        @Option(help: "Days until it expires (1–7).") var days: Int = 7
        @Flag(help: "Print the token only, without the QR code.") var noQr = false

        func validate() throws {
            guard (1...7).contains(days) else { throw ValidationError("--days must be 1–7: an invitation lives at most seven days") }
        }

        func run() async throws {
            let session = try await profile.session()
            let (token, response) = try await session.createInvitation(
                sharing: familyMember, lifetime: TimeInterval(days) * 24 * 3600)
            let invitation = response.invitation.invitation
            print("invitation \(invitation.invitationID.uuidString.lowercased())"
                + (familyMember.map { " to share \($0.uuidString.lowercased())" } ?? "")
                + ", expires \(Timestamp.format(invitation.expiresAt))")
            print("hand this over in person; it works once and is not stored anywhere:")
            print("")
            print(token.description)
            if !noQr {
                print("")
                print(try QRCode.encode(Array(token.description.utf8)).terminalText())
            }
            print("")
            print("then, once they accepted: rescind invite complete \(invitation.invitationID.uuidString.lowercased())")
        }
    }

    struct Accept: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Accept an invitation handed to you; pins the inviter's keys and prints the verification code.",
            discussion: """
                Example:
                  rescind invite accept rescind-invite:3q2-7w…
                """)
        @OptionGroup var profile: ProfileOptions
        @Argument(help: "The token, as printed by `rescind invite create`.") var token: String

        func run() async throws {
            let parsed: InvitationToken
            do {
                parsed = try InvitationToken(parsing: token)
            } catch {
                throw CLIError("\(error)")
            }
            let session = try await profile.session()
            do {
                let (invitation, code) = try await session.acceptInvitation(parsed, pins: session.pins)
                print("accepted the invitation of \(invitation.inviterUserID.uuidString.lowercased()); their keys are pinned")
                print("verification code \(code): compare it with the one the inviter sees")
            } catch let error as InvitationError {
                throw CLIError(error.description)
            }
        }
    }

    struct Complete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Complete one of your invitations once accepted: pin their keys, share, print the code.",
            discussion: """
                Example:
                  rescind invite complete 0d4e…
                """)
        @OptionGroup var profile: ProfileOptions
        @Argument(help: "The invitation id `rescind invite create` printed.") var invitation: UUID

        func run() async throws {
            let session = try await profile.session()
            do {
                let (invitee, shared, code) = try await session.completeInvitation(invitation, pins: session.pins)
                print("\(invitee.displayName) (\(invitee.userID.uuidString.lowercased())) accepted; their keys are pinned")
                if let shared { print("shared \(shared.uuidString.lowercased()) with them") }
                print("verification code \(code): compare it with the one they saw")
            } catch let error as InvitationError {
                throw CLIError(error.description)
            }
        }
    }
}
