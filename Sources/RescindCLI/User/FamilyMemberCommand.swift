import ArgumentParser
import Foundation
import RescindClient
import RescindProtocol

/// Family members: create, list, hand over.
struct FamilyMemberCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "family-member",
        abstract: "Create and list family members, transfer and adopt ownership.",
        discussion: """
            Examples:
              rescind family-member create
              rescind family-member transfer 6f1c… --to 93ab…   (then, as 93ab…: rescind family-member adopt 6f1c…)
            """,
        subcommands: [Create.self, List.self, Transfer.self, Adopt.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a family member with a fresh FMK (v1), wrapped under your master key.",
            discussion: "Example:\n  rescind family-member create")
        @OptionGroup var profile: ProfileOptions

        func run() async throws {
            let (id, _) = try await profile.session().createFamilyMember()
            print(id.uuidString.lowercased())
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the family members you can read, with owner and FMK version.",
            discussion: "Examples:\n  rescind family-member list\n  rescind family-member list --json | jq -r '.[].family_member_id'")
        @OptionGroup var profile: ProfileOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let session = try await profile.session()
            let members = try await session.client.familyMembers()
            if output.json { return try output.print(members) }
            for member in members {
                let role = member.ownerUserID == session.keys.userID ? "owner" : "shared with you"
                print("\(member.familyMemberID.uuidString.lowercased())  FMK v\(member.currentFMKVersion)  \(role)")
            }
        }
    }

    struct Transfer: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Hand ownership to someone who already has access (they then run `adopt`).",
            discussion: """
                Changing who owns a family member waits for the security delay (24 h by default), and
                your other devices can veto it: one stolen device cannot give your family away. It takes
                effect at once when another device of yours approves it (`rescind identity approve OP`)
                or with your recovery words (--words-file, or --recovery to type them).

                Examples:
                  rescind family-member transfer 6f1c… --to 93ab…
                  rescind family-member transfer 6f1c… --to 93ab… --words-file /media/usb/recovery.txt
                """)
        @OptionGroup var profile: ProfileOptions
        @Argument(help: "Family member id.") var familyMember: UUID
        @Option(help: "The new owner's user id.") var to: UUID
        @Option(help: "Approve at once with the recovery words in this file.") var wordsFile: String?
        @Flag(help: "Approve at once with the recovery words, typed on the terminal.") var recovery = false

        func validate() throws {
            if recovery, wordsFile != nil { throw ValidationError("give --words-file or --recovery, not both") }
        }

        func run() async throws {
            let recoveryKey = recovery || wordsFile != nil ? try RecoveryWords.key(wordsFile: wordsFile) : nil
            let session = try await profile.session()
            var operation = try await session.transferOwnership(familyMember, to: to)
            if let recoveryKey {
                let approved = try await recoveryKey.order(
                    .approve, for: session.keys.userID, operationID: operation.operationID, transfer: operation.transfer?.statement,
                    through: session.client)
                operation = approved.operation ?? operation
            }
            let id = operation.operationID.uuidString.lowercased()
            switch operation.state {
            case .applied:
                print("owner is now \(to.uuidString.lowercased()); they should run: rescind family-member adopt \(familyMember.uuidString.lowercased())")
            case .pending:
                print("transfer pending: operation \(id), takes effect \(Timestamp.format(operation.effectiveAt)) unless vetoed")
                print("to make it now: rescind identity approve \(id) --words-file FILE (your recovery words); another device can veto it")
            default:
                throw CLIError("the transfer did not take effect: operation \(id) is \(operation.state.rawValue)")
            }
        }
    }

    struct Adopt: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "As the new owner, re-wrap your copy of the FMK under your own master key.",
            discussion: "Example:\n  rescind family-member adopt 6f1c…")
        @OptionGroup var profile: ProfileOptions
        @Argument(help: "Family member id.") var familyMember: UUID

        func run() async throws {
            let session = try await profile.session()
            // The service lets any grantee re-wrap its own copy; adopting is only meaningful for the owner.
            let member = try await session.client.familyMembers().first { $0.familyMemberID == familyMember }
            guard let member, member.ownerUserID == session.keys.userID else {
                throw CLIError(
                    "you do not own \(familyMember.uuidString.lowercased()): its owner first runs `rescind family-member transfer … --to <your user id>`")
            }
            try await session.adoptOwnership(familyMember)
            print("your copy of the FMK is now wrapped under your master key")
        }
    }
}
