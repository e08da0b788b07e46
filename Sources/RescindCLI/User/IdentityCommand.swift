import ArgumentParser
import Foundation
import RescindClient
import RescindConfiguration
import RescindCrypto
import RescindProtocol

/// Creates or shows this profile's user identity.
struct IdentityCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "identity",
        abstract: "Create or show your user identity (keys stay in the encrypted profile).",
        discussion: """
            Examples:
              RESCIND_PASSPHRASE=… rescind identity create --name "Adult A"
              rescind identity show --profile ~/.rescind-adult-b
              rescind identity rotate --words-file recovery.txt
              rescind identity pending
              RESCIND_NEW_PASSPHRASE=… rescind identity passphrase
            """,
        subcommands: [
            Create.self, Show.self, Code.self, Trust.self, Rotate.self, Pending.self, Approve.self, Veto.self, Cancel.self,
            Clear.self, Passphrase.self, Recover.self, RecoveryKeyCommand.self, Backup.self, Certify.self,
        ])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Generate your keys, register them with the grant service, and write the encrypted profile.",
            discussion: """
                Generates an X25519 key (FMKs are wrapped to it), an Ed25519 identity key, a master
                key and this device's key; only public keys leave the machine.

                Also generates your recovery key and prints it once, as 34 words and a QR code of
                their first four letters: write the words on paper and keep them away from your devices. Only its
                public half is registered; nothing keeps the words. They stand for you when a
                device is stolen (docs/decisions/stolen-unlocked-device.md).

                Example:
                  RESCIND_PASSPHRASE=… rescind identity create --name "Adult A"
                """)

        @OptionGroup var profile: ProfileOptions
        @Option(help: "Your display name.") var name: String
        @Option(help: "This device's name.") var deviceName: String?
        @Option(help: "This device's kind: \(DeviceKind.allCases.map(\.rawValue).joined(separator: ", ")).")
        var deviceKind: DeviceKind?

        func run() async throws {
            // The CLI keeps no FMK or record beyond the process: revocations do not wait for it.
            let recoveryKey = try RecoveryKey.generate()
            let enrolled = try await KeystoreEnrolment.registerNewUser(
                displayName: name, deviceName: deviceName ?? "\(name)'s rescind CLI", deviceKind: deviceKind,
                role: .interactive, recoveryKey: recoveryKey, configuration: try await profile.configuration())
            print("user   \(enrolled.userID.uuidString.lowercased())")
            print("device \(enrolled.deviceID.uuidString.lowercased())")
            print("profile \(profile.directory) (encrypted; keep the passphrase safe)")
            for unfinished in enrolled.recoverySetupErrors {
                // The identity and profile exist; the words below finish what is missing.
                FileHandle.standardError.write(Data("rescind: \(unfinished)\n".utf8))
            }
            print("")
            try Self.printOnce(recoveryKey)
        }

        /// The words in rows of six and a QR code of their first four letters, for paper.
        static func printOnce(_ recoveryKey: RecoveryKey) throws {
            print("recovery key: write these \(recoveryKey.words.count) words on paper now. They are shown once and kept nowhere.")
            for row in stride(from: 0, to: recoveryKey.words.count, by: 6) {
                let words = recoveryKey.words[row..<min(row + 6, recoveryKey.words.count)].enumerated().map { offset, word in
                    "\(String(row + offset + 1).leftPadded(to: 2)) \(word.padding(toLength: 8, withPad: " ", startingAt: 0))"
                }
                print("  " + words.joined(separator: " "))
            }
            // Four letters a word are enough to type or scan it back, and keep the code small.
            print(try QRCode.encode(Array(recoveryKey.words.map { $0.prefix(4) }.joined(separator: " ").utf8)).terminalText())
        }
    }

    struct RecoveryKeyCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "recovery-key",
            abstract: "Make a new recovery key for your identity (one made without one, or in place of a lost one).",
            discussion: """
                Generates a recovery key, prints it once as words and a QR code, and registers its
                public half. Setting a recovery key changes who can stand for you, so from this
                device alone it waits for the security delay (another device of yours can veto it,
                like a rotation); another device's approval (rescind identity approve OP), or the
                current recovery words (--words-file, --recovery), make it take effect at once.
                Once it does, your devices' certificates by the old key certify nothing: certify
                each again with the new words (rescind identity certify).

                Examples:
                  rescind identity recovery-key
                  rescind identity recovery-key --words-file /media/usb/old-recovery.txt
                """)

        @OptionGroup var profile: ProfileOptions
        @Option(help: "Approve at once with the current recovery words in this file.") var wordsFile: String?
        @Flag(help: "Approve at once with the current recovery words, typed on the terminal.") var recovery = false

        func run() async throws {
            if recovery, wordsFile != nil { throw ValidationError("give --words-file or --recovery, not both") }
            let current = recovery || wordsFile != nil ? try RecoveryWords.key(wordsFile: wordsFile) : nil
            let session = try await profile.session()
            let newKey = try RecoveryKey.generate()
            var operation = try await session.setRecoveryKey(newKey)
            if let current {
                let anonymous = GrantServiceClient(baseURL: try profile.grantServiceURL, tls: try profile.tls)
                operation = try await current.order(.approve, for: session.keys.userID, operationID: operation.operationID, through: anonymous)
                    .operation ?? operation
            }
            let id = operation.operationID.uuidString.lowercased()
            if operation.state == .applied {
                try await session.storeKeyBackup(with: newKey)
                try await session.certifyThisDevice(with: newKey)
                print("new recovery key registered (operation \(id)); the old words no longer stand for you")
                print("your keys are escrowed to the new words (key backup), and they certify this device;"
                    + " certify your other devices again: rescind identity certify --recovery, on each")
            } else {
                print("new recovery key pending: operation \(id), takes effect \(Timestamp.format(operation.effectiveAt)) unless vetoed")
                print("to make it now: rescind identity approve \(id) (on another device of yours), or run this with --words-file")
                print("once it took effect: rescind identity backup --recovery and rescind identity certify --recovery"
                    + " (with the new words) escrow your keys to them and certify this device")
            }
            print("")
            try Create.printOnce(newKey)
        }
    }

    struct Recover: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "With your recovery words, at once: enrol, retire, restore, clear or vouch for a device; approve or cancel a pending operation.",
            discussion: """
                Needs no device of yours and no profile: the recovery key, kept on paper, stands for
                you. The words are read from --words-file, else asked for on the terminal; nothing
                keeps them. Restore the devices a thief retired first, then retire the thief's
                (which also withdraws every operation it began); cancel what the thief began, or
                approve your own rotation so it takes effect now. With no device of yours left,
                --enrol NAME makes this (blank) profile a new device holding your keys from your
                key backup.

                Examples:
                  rescind identity recover --user 6f1c… --restore 8a2b…
                  rescind identity recover --user 6f1c… --retire 0d4e… --words-file /media/usb/recovery.txt
                  rescind identity recover --user 6f1c… --cancel 3c9d…
                  rescind identity recover --user 6f1c… --enrol "new laptop" --words-file /media/usb/recovery.txt
                """)

        @OptionGroup var profile: ProfileOptions
        @Option(help: "Your user id.") var user: UUID
        @Option(help: "A device of yours to retire at once (the stolen one).") var retire: UUID?
        @Option(help: "A retired device of yours to restore.") var restore: UUID?
        @Option(help: "A device of yours a veto froze, to unfreeze.") var clear: UUID?
        @Option(help: "A device of yours enrolled recently, to let it approve and veto at once.") var vouch: UUID?
        @Option(help: "A pending operation of yours to approve (it takes effect now).") var approve: UUID?
        @Option(help: "A pending operation of yours to cancel.") var cancel: UUID?
        @Option(help: "Enrol this profile as a new device of yours with this name, holding your keys from your key backup.")
        var enrol: String?
        @Option(help: "A file holding the recovery words (else they are asked for).") var wordsFile: String?

        func validate() throws {
            guard [retire, restore, clear, vouch, approve, cancel].compactMap({ $0 }).count + (enrol == nil ? 0 : 1) == 1 else {
                throw ValidationError("give exactly one of --enrol, --retire, --restore, --clear, --vouch, --approve and --cancel")
            }
        }

        func run() async throws {
            let key = try RecoveryWords.key(wordsFile: wordsFile)
            let client = GrantServiceClient(baseURL: try profile.grantServiceURL, tls: try profile.tls)
            if let enrol { return try await enrolFromBackup(name: enrol, key: key, client: client) }
            let order: (RecoveryAction.Kind, UUID?, UUID?) =
                if let retire { (.retire, retire, nil) } else if let restore { (.restore, restore, nil) } else if let clear {
                    (.clear, clear, nil)
                } else if let vouch { (.vouch, vouch, nil) } else if let approve { (.approve, nil, approve) } else { (.cancel, nil, cancel) }
            let done: RecoveryActionResult
            do {
                done = try await key.order(order.0, for: user, deviceID: order.1, operationID: order.2, through: client)
            } catch let error as GrantServiceError where order.0 == .approve && error.message.contains("statement_signature") {
                throw CLIError(
                    "\(error.message); the words sign a rotation's or a transfer's statement only from a device of yours "
                        + "that shows it: rescind identity approve \(order.2!.uuidString.lowercased()) --words-file FILE")
            }
            if let device = done.deviceID {
                let verb = [RecoveryAction.Kind.retire: "retired", .restore: "restored", .clear: "cleared", .vouch: "vouched for"][done.kind]
                    ?? done.kind.rawValue
                print("\(verb) device \(device.uuidString.lowercased())")
            } else if let operation = done.operation {
                print("operation \(operation.operationID.uuidString.lowercased()) \(operation.state.rawValue)")
            }
        }

        /// A new device for a user with no device left: enrolled by the recovery key, holding the
        /// keys the recovery key opens from the key backup (checked by `UserSession.recovering`).
        private func enrolFromBackup(name: String, key: RecoveryKey, client: GrantServiceClient) async throws {
            let configuration = try await profile.configuration()
            try KeystoreEnrolment.refuseIfEnrolled(configuration)
            let deviceKey = Ed25519.PrivateKey(), deviceID = UUID()
            try await key.order(
                .enrol, for: user,
                device: RegisterDeviceRequest(
                    deviceID: deviceID, name: name, role: .interactive, signingPublicKey: Data(deviceKey.publicKey.rawRepresentation)),
                through: client)
            let session = try await UserSession.recovering(
                userID: user, deviceID: deviceID, deviceKey: deviceKey, recoveryKey: key, baseURL: configuration.grantServiceURL,
                tls: configuration.tls)
            try await KeystoreEnrolment.install(userKeys: session.keys, deviceID: deviceID, deviceKey: deviceKey, configuration: configuration)
            print("enrolled device \(deviceID.uuidString.lowercased()) (\(name)) with your keys from your key backup")
            do {
                try await session.certifyThisDevice(with: key)
            } catch {
                FileHandle.standardError.write(Data("rescind: this device was not certified by the recovery key (\(error)); run rescind identity certify --recovery\n".utf8))
            }
            print("next: retire the thief's device (rescind identity recover --retire D), then rescind identity rotate --recovery")
        }
    }

    struct Backup: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Escrow your current keys to your recovery words, so the words alone give them back.",
            discussion: """
                Seals your identity, agreement and master keys to a key only your recovery words
                derive, signs the result with the words, and stores it with the grant service (which
                can neither open nor forge it). `identity create` and a rotation approved with the
                words do this themselves; run it after a rotation another device approved or the
                delay let through, and after a new recovery key took effect. With every device lost,
                `rescind identity recover --enrol NAME` gets the keys back on a new one.

                Examples:
                  rescind identity backup --words-file /media/usb/recovery.txt
                  rescind identity backup --recovery
                """)

        @OptionGroup var profile: ProfileOptions
        @OptionGroup var words: RecoveryWordsOptions

        func run() async throws {
            let key = try words.key()
            let session = try await profile.session()
            try await session.storeKeyBackup(with: key)
            print("key backup stored: your recovery words give back your current keys")
        }
    }

    struct Certify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Certify this device's key with your recovery words, so its word counts at once beside another certified device's.",
            discussion: """
                Your recovery words sign this device's own key, and the grant service keeps the
                certificate (it cannot make one). An identity rotation or an ownership transfer begun
                on one certified device and approved on another (rescind identity approve OP, or
                rescind-agent approve OP on an agent certified with rescind-agent certify) then
                takes effect at once,
                and every client that checks your family members' histories can tell it was two of
                your devices: a thief holding one device's files holds one certified key. Run it on
                each device you keep; `identity create` and `identity recover --enrol` certify the
                device they make. It also lets this device approve and veto at once, as a device
                the words enrolled.

                Examples:
                  rescind identity certify --words-file /media/usb/recovery.txt
                  rescind identity certify --recovery
                """)

        @OptionGroup var profile: ProfileOptions
        @OptionGroup var words: RecoveryWordsOptions

        func run() async throws {
            let key = try words.key()
            let session = try await profile.session()
            try await session.certifyThisDevice(with: key)
            print("device \(session.deviceID.uuidString.lowercased()) certified by your recovery key")
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print your user id, device id and public keys.",
            discussion: """
                With --json: user_id, device_id, agreement_public_key, identity_public_key
                (base64), identity_generation, recovery_public_key (only one your identity key
                bound), key_backup (current, of_previous_keys, of_another_recovery_key, none,
                no_recovery_key).

                Examples:
                  rescind identity show
                  rescind identity show --json
                """)

        @OptionGroup var profile: ProfileOptions
        @OptionGroup var output: JSONOption

        /// The identity as `--json` prints it.
        struct Document: Encodable {
            let userID: UUID
            let deviceID: UUID
            let agreementPublicKey: Data
            let identityPublicKey: Data
            let identityGeneration: Int
            let recoveryPublicKey: Data?
            let keyBackup: BackupState

        }

        func run() async throws {
            let session = try await profile.session()
            let me = try await session.client.me()
            let document = Document(
                userID: session.keys.userID, deviceID: session.deviceID,
                agreementPublicKey: Data(session.keys.agreementKey.publicKey.rawRepresentation),
                identityPublicKey: Data(session.keys.identityKey.publicKey.rawRepresentation),
                identityGeneration: me.user.identityGeneration,
                recoveryPublicKey: UserSession.verifiedRecoveryPublicKey(of: me.user, keys: session.keys),
                keyBackup: try await Self.backupState(session, me.user))
            if output.json { return try output.print(document) }
            print("user              \(document.userID.uuidString.lowercased())")
            print("device            \(document.deviceID.uuidString.lowercased())")
            print("agreement key     \(document.agreementPublicKey.base64EncodedString())")
            print("identity key      \(document.identityPublicKey.base64EncodedString())")
            print("generation        \(document.identityGeneration)")
            print("key backup        \(document.keyBackup.text)")
        }

        /// Whether the recovery words give back this identity's keys (`KeyBackup`).
        enum BackupState: String, Encodable {
            case current
            case ofPreviousKeys = "of_previous_keys"
            case ofAnotherRecoveryKey = "of_another_recovery_key"
            case none
            case noRecoveryKey = "no_recovery_key"

            /// The state, and what to do when the words do not give back these keys.
            var text: String {
                switch self {
                case .current: "current (your recovery words give back these keys)"
                case .ofPreviousKeys: "of previous keys: rescind identity backup --recovery"
                case .ofAnotherRecoveryKey: "of another recovery key: rescind identity backup --recovery"
                case .none: "none: rescind identity backup --recovery"
                case .noRecoveryKey: "none (no recovery key: rescind identity recovery-key)"
                }
            }
        }

        /// The key backup's state, as the service reports it.
        static func backupState(_ session: UserSession, _ user: UserResponse) async throws -> BackupState {
            guard user.recoveryPublicKey != nil else { return .noRecoveryKey }
            let backup: KeyBackup
            do {
                backup = try await session.client.keyBackup()
            } catch let error as GrantServiceError where error.status == 404 {
                return .none
            }
            guard backup.recoveryPublicKey == user.recoveryPublicKey else { return .ofAnotherRecoveryKey }
            guard backup.identityPublicKey == user.identityPublicKey else { return .ofPreviousKeys }
            return .current
        }
    }

    struct Code: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the verification code your keys give with another user's current keys.",
            discussion: """
                Both of you run it, each with the other's user id, and compare the codes out of band
                (in person, by phone): the same code means each of you holds the other's real current
                key. After a stolen device, the owner re-grants you only once the codes match.

                Examples:
                  rescind identity code --with 93ab…
                  rescind identity code --with 93ab… --json
                """)

        @OptionGroup var profile: ProfileOptions
        @Option(help: "The other user's id.") var with: UUID
        @OptionGroup var output: JSONOption

        /// The code as `--json` prints it, with the keys it was made from.
        struct Document: Encodable {
            let code: String
            let userID: UUID
            let displayName: String
            let identityGeneration: Int

        }

        func run() async throws {
            let session = try await profile.session()
            let other = try await session.client.user(with)
            let code = try session.keys.agreementKey.verificationCode(
                with: try X25519.PublicKey(rawRepresentation: [UInt8](other.agreementPublicKey)))
            if output.json {
                return try output.print(
                    Document(code: "\(code)", userID: other.userID, displayName: other.displayName, identityGeneration: other.identityGeneration))
            }
            print("verification code \(code) (your keys with \(other.displayName)'s, generation \(other.identityGeneration))")
        }
    }

    struct Trust: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Pin another user's current keys after comparing verification codes with them.",
            discussion: """
                When the grant service shows keys for someone other than the ones you pinned (they
                rotated after losing a device, or the service is lying), grants to them are refused.
                Compare codes in person or by phone (`rescind identity code --with U` on both sides);
                if they match, pin the new keys by typing the code you both saw.

                Example:
                  rescind identity trust 93ab… --code A3-5F-2B
                """)

        @OptionGroup var profile: ProfileOptions
        @Argument(help: "The other user's id.") var user: UUID
        @Option(help: "The verification code you compared with them.") var code: String

        func run() async throws {
            let session = try await profile.session()
            let other = try await session.client.user(user)
            let expected = try session.keys.agreementKey.verificationCode(
                with: try X25519.PublicKey(rawRepresentation: [UInt8](other.agreementPublicKey)))
            guard code.uppercased() == expected else {
                throw CLIError(
                    "the code \(code) is not the one your keys give with \(other.displayName)'s current keys: nothing pinned "
                        + "(the keys the grant service shows are not the ones they hold)")
            }
            try session.pins.pin(user, .init(identityPublicKey: other.identityPublicKey, agreementPublicKey: other.agreementPublicKey, source: .comparedCode))
            print("pinned \(other.displayName)'s current keys (generation \(other.identityGeneration)) after comparing code \(expected)")
        }
    }

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Replace your identity keys (after a device that held them was lost or stolen).",
            discussion: """
                Generates new X25519, Ed25519 identity and master keys, registers them with a statement
                signed by your current identity key and the new one, and moves every key you hold to
                them. From then on the grant service refuses any grant wrapped to your old key, so
                whoever copied the old keys from the lost device is handed nothing new.

                A rotation changes who you are, so one device alone cannot make it at once (a thief
                with your unlocked phone could): it waits for the deployment's security delay (24 h
                by default), and your other devices see it and can veto it. It takes effect at once
                when a second device of yours approves it (`rescind identity approve OP` there) or
                with your recovery words (--words-file, or --recovery to type them). Run this command
                again, or any command, after it took effect: it moves every key you hold.

                Retire the lost device first (`rescind device retire D`) so that it cannot answer for
                you, and ask the owners of what you had access to to revoke and re-grant you
                (`rescind revoke --everywhere --user U`, then `rescind grant F --to U`). Safe to run
                again if it was interrupted: it finishes what it began. Your other devices still hold
                the old keys: --bundle-out writes the new ones for them, wrapped under a one-time
                passphrase (RESCIND_BUNDLE_PASSPHRASE); each takes them with
                `rescind-agent update-identity --bundle FILE`.

                Examples:
                  rescind identity rotate
                  rescind identity rotate --words-file /media/usb/recovery.txt
                  RESCIND_BUNDLE_PASSPHRASE=… rescind identity rotate --recovery --bundle-out keys.update
                """)

        @OptionGroup var profile: ProfileOptions
        @Option(help: "Also write the new keys for your other devices here, under RESCIND_BUNDLE_PASSPHRASE.")
        var bundleOut: String?
        @Option(help: "Approve at once with the recovery words in this file.") var wordsFile: String?
        @Flag(help: "Approve at once with the recovery words, typed on the terminal.") var recovery = false

        func validate() throws {
            if bundleOut != nil, EnvironmentReader.secret("RESCIND_BUNDLE_PASSPHRASE", in: ProcessInfo.processInfo.environment) == nil {
                throw ValidationError("--bundle-out needs RESCIND_BUNDLE_PASSPHRASE (a one-time passphrase for the file)")
            }
            if recovery, wordsFile != nil { throw ValidationError("give --words-file or --recovery, not both") }
        }

        func run() async throws {
            let configuration = try await profile.configuration()
            let recoveryKey = recovery || wordsFile != nil ? try RecoveryWords.key(wordsFile: wordsFile) : nil
            let outcome = try await KeystoreRotation.rotateIdentity(configuration: configuration, recoveryKey: recoveryKey)
            if let pending = outcome.pending {
                print("identity rotation pending: operation \(pending.operationID.uuidString.lowercased())")
                print("takes effect      \(Timestamp.format(pending.effectiveAt)) unless vetoed")
                print("to make it now    rescind identity approve \(pending.operationID.uuidString.lowercased())   (on another device of yours)")
                print("                  or: rescind identity rotate --recovery   (with your recovery words)")
                return
            }
            print("identity rotated: generation \(outcome.generation)")
            print("keys moved        \(outcome.rewrapped) (\(outcome.alreadyCurrent) already current)")
            print(
                outcome.backedUp
                    ? "key backup        renewed: your recovery words give back the new keys"
                    : "key backup        still holds your previous keys: rescind identity backup --recovery renews it")
            if let bundleOut {
                try await KeystoreRotation.writeIdentityUpdate(
                    to: bundleOut, passphrase: EnvironmentReader.secret("RESCIND_BUNDLE_PASSPHRASE", in: ProcessInfo.processInfo.environment) ?? "",
                    configuration: configuration)
                print("new keys for your other devices: \(bundleOut) (on each: rescind-agent update-identity --bundle FILE)")
            }
        }
    }

    struct Passphrase: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Protect your profile with a new passphrase (or key file); your keys and records do not change.",
            discussion: """
                Unlocks the profile as usual (RESCIND_PASSPHRASE, …) and re-wraps its keys under a key
                derived from the new passphrase (Argon2id), read from RESCIND_NEW_PASSPHRASE,
                RESCIND_NEW_PASSPHRASE_FILE or RESCIND_NEW_KEY_FILE, or asked for twice on the terminal.

                Example:
                  RESCIND_PASSPHRASE=old RESCIND_NEW_PASSPHRASE=new rescind identity passphrase
                """)

        @OptionGroup var profile: ProfileOptions

        func run() async throws {
            let newUnlock: AgentConfiguration.Unlock
            if let named = try AgentConfiguration.Unlock.named(
                passphrase: "RESCIND_NEW_PASSPHRASE", passphraseFile: "RESCIND_NEW_PASSPHRASE_FILE", keyFile: "RESCIND_NEW_KEY_FILE",
                in: profile.environment)
            {
                newUnlock = named
            } else {
                guard isatty(STDIN_FILENO) == 1, let first = getpass("New passphrase: ").map({ String(cString: $0) }),
                    let second = getpass("New passphrase again: ").map({ String(cString: $0) })
                else {
                    throw CLIError("set RESCIND_NEW_PASSPHRASE (or RESCIND_NEW_PASSPHRASE_FILE / RESCIND_NEW_KEY_FILE)")
                }
                guard first == second, !first.isEmpty else { throw CLIError("the two passphrases differ (or are empty)") }
                newUnlock = .passphrase(first)
            }
            try await KeystoreRotation.changeUnlock(configuration: try await profile.configuration(), to: newUnlock)
            print("profile \(profile.directory) re-protected; use the new passphrase from now on")
        }
    }
}

extension String {
    /// Right-aligned in `width` characters.
    fileprivate func leftPadded(to width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}
