import ArgumentParser
import Foundation
import RescindClient
import RescindProtocol

/// The operations that change who you are (`GovernedOperation`), as your devices see them:
/// list, approve, veto or cancel them, and unfreeze a device a veto froze.
extension IdentityCommand {
    struct Pending: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the operations that change who you are and wait for the security delay.",
            discussion: """
                An identity rotation begun on one of your devices waits (24 h by default) before it
                takes effect. If you did not begin it, someone holds one of your devices: veto it
                (`rescind identity veto OP`), then retire that device. --all lists decided ones too.

                Example:
                  rescind identity pending
                """)

        @OptionGroup var profile: ProfileOptions
        @Flag(help: "Also list operations already decided.") var all = false
        @OptionGroup var output: JSONOption

        func run() async throws {
            let session = try await profile.session()
            let operations = try await session.client.governedOperations().filter { all || $0.state == .pending }
            if output.json { return try output.print(GovernedOperationList(operations: operations)) }
            guard !operations.isEmpty else {
                print(all ? "no governed operations" : "nothing pending")
                return
            }
            for operation in operations {
                print(GovernanceBanner.line(operation, thisDevice: session.deviceID))
            }
        }
    }

    struct Approve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Approve a pending operation of yours: it takes effect now.",
            discussion: """
                From this device: only a device that was yours before the operation began may approve
                it (a device enrolled by another device governs a security delay after its enrolment).
                With the recovery words (--words-file, --recovery) any operation of yours, at once.
                Every device holds your identity key, so a device's word alone is nothing the
                family members' key histories can tell from a thief's: an identity rotation approved
                by a device takes effect an hour after it began, and an ownership transfer needs the
                words — unless this device and the one that began it are both certified by your
                recovery words (rescind identity certify): each signs with its own key, and it takes
                effect at once.

                Examples:
                  rescind identity approve 3c9d…
                  rescind identity approve 3c9d… --words-file /media/usb/recovery.txt
                """)

        @OptionGroup var profile: ProfileOptions
        @Argument(help: "The operation id (rescind identity pending).") var operation: UUID
        @Option(help: "Approve with the recovery words in this file.") var wordsFile: String?
        @Flag(help: "Approve with the recovery words, typed on the terminal.") var recovery = false

        func validate() throws {
            if recovery, wordsFile != nil { throw ValidationError("give --words-file or --recovery, not both") }
        }

        func run() async throws {
            let session = try await profile.session()
            let decided: GovernedOperation
            if recovery || wordsFile != nil {
                let key = try RecoveryWords.key(wordsFile: wordsFile)
                guard let pending = try await session.client.governedOperations().first(where: { $0.operationID == operation }) else {
                    throw CLIError("no operation \(operation.uuidString.lowercased()) of yours (rescind identity pending)")
                }
                // The recovery key signs a transfer statement only when it says what the operation shows.
                if let transfer = pending.transfer {
                    guard let statement = transfer.statement?.statement, statement.kind == .transfer,
                        statement.familyMemberID == transfer.familyMemberID, statement.newOwner?.userID == transfer.newOwnerUserID
                    else { throw CLIError("the grant service listed a transfer whose statement says otherwise; nothing was signed") }
                }
                // And a rotation statement only when it starts from my current identity key, signed by it and the new one.
                if let rotation = pending.rotation {
                    guard rotation.statement.userID == session.keys.userID, rotation.hasValidSignatures(),
                        rotation.statement.previousIdentityPublicKey == Data(session.keys.identityKey.publicKey.rawRepresentation)
                    else { throw CLIError("the grant service listed a rotation not signed from your current identity key; nothing was signed") }
                }
                let anonymous = GrantServiceClient(baseURL: try profile.grantServiceURL, tls: try profile.tls)
                guard let approved = try await key.approve(pending, through: anonymous).operation else {
                    throw CLIError("the grant service did not say what became of the operation")
                }
                decided = approved
            } else {
                decided = try await session.approve(operation)
            }
            print("operation \(decided.operationID.uuidString.lowercased()) \(decided.state.rawValue)")
            if decided.state == .pending {
                // A rotation approved by a device waits for its floor, unless both devices are
                // certified (the recovery words need not).
                print("takes effect at \(Timestamp.format(decided.effectiveAt)), an hour after it began, unless vetoed;"
                    + " your recovery words make it immediate (--words-file), as does approving from a device they"
                    + " certified when the device that began it has a certificate too (rescind identity certify)")
            }
        }
    }

    struct Veto: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Veto an operation another device of yours began; that device is frozen.",
            discussion: """
                The operation never takes effect, and the device that began it can make no further
                change to who you are until this device, another of yours or your recovery words
                clear it (`rescind identity clear D`). If the device was stolen, retire it next:
                `rescind device retire D`.

                Example:
                  rescind identity veto 3c9d…
                """)

        @OptionGroup var profile: ProfileOptions
        @Argument(help: "The operation id (rescind identity pending).") var operation: UUID

        func run() async throws {
            let decided = try await profile.session().client.vetoOperation(operation)
            print("operation \(decided.operationID.uuidString.lowercased()) \(decided.state.rawValue)")
            print("device \(decided.initiatedBy.uuidString.lowercased()) is frozen; if it was stolen: rescind device retire \(decided.initiatedBy.uuidString.lowercased())")
        }
    }

    struct Cancel: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Withdraw an operation this device began.",
            discussion: "Example:\n  rescind identity cancel 3c9d…")

        @OptionGroup var profile: ProfileOptions
        @Argument(help: "The operation id (rescind identity pending).") var operation: UUID

        func run() async throws {
            let decided = try await profile.session().client.cancelOperation(operation)
            print("operation \(decided.operationID.uuidString.lowercased()) \(decided.state.rawValue)")
        }
    }

    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Unfreeze another device of yours that a veto froze.",
            discussion: "Example:\n  rescind identity clear 8a2b…")

        @OptionGroup var profile: ProfileOptions
        @Argument(help: "The device id (rescind device list).") var device: UUID

        func run() async throws {
            try await profile.session().client.clearDevice(device)
            print("cleared device \(device.uuidString.lowercased())")
        }
    }
}

/// The line a CLI prints for a governed operation; a pending one another device began is a warning.
enum GovernanceBanner {
    static func line(_ operation: GovernedOperation, thisDevice: UUID) -> String {
        let id = operation.operationID.uuidString.lowercased()
        let device = operation.initiatedBy == thisDevice ? "this device" : "device \(operation.initiatedBy.uuidString.lowercased())"
        let what =
            switch operation.kind {
            case .rotateIdentity: "identity rotation"
            case .setRecovery: "new recovery key"
            case .transferOwnership:
                "ownership transfer of \(operation.transfer.map { $0.familyMemberID.uuidString.lowercased() } ?? "?") "
                    + "to \(operation.transfer.map { $0.newOwnerUserID.uuidString.lowercased() } ?? "?")"
            }
        switch operation.state {
        case .pending:
            return "\(id)  \(what) begun by \(device) at \(Timestamp.format(operation.receivedAt)), "
                + "takes effect \(Timestamp.format(operation.effectiveAt)) unless vetoed"
        default:
            return "\(id)  \(what) begun by \(device): \(operation.state.rawValue)"
                + (operation.decidedBy.map { " (\($0.rawValue))" } ?? "")
        }
    }

    /// Printed to standard error before a command's own output, for each pending operation
    /// another device began: the user may not know a thief began it.
    static func warn(_ operations: [GovernedOperation], thisDevice: UUID) {
        for operation in operations where operation.state == .pending && operation.initiatedBy != thisDevice {
            FileHandle.standardError.write(Data((
                "! \(line(operation, thisDevice: thisDevice))\n"
                + "! not you? rescind identity veto \(operation.operationID.uuidString.lowercased()), "
                + "then rescind device retire \(operation.initiatedBy.uuidString.lowercased())\n").utf8))
        }
    }
}

/// The recovery key, from its words in a file or typed on the terminal (never kept).
enum RecoveryWords {
    static func key(wordsFile: String?) throws -> RecoveryKey {
        do {
            if let wordsFile { return try RecoveryKey(wordsFile: wordsFile) }
            guard isatty(STDIN_FILENO) == 1, let typed = getpass("Recovery words: ") else {
                throw CLIError("pass --words-file, or run on a terminal to type the recovery words")
            }
            return try RecoveryKey(words: String(cString: typed))
        } catch let error as RecoveryKeyError {
            throw CLIError(error.description)
        }
    }
}

/// `--words-file F` or `--recovery`: a command that needs the recovery words, from a file or typed.
struct RecoveryWordsOptions: ParsableArguments {
    @Option(help: "A file holding the recovery words.") var wordsFile: String?
    @Flag(help: "Type the recovery words on the terminal.") var recovery = false

    func validate() throws {
        if recovery, wordsFile != nil { throw ValidationError("give --words-file or --recovery, not both") }
    }

    func key() throws -> RecoveryKey { try RecoveryWords.key(wordsFile: wordsFile) }
}
