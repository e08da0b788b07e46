import Foundation
import RescindTestSupport
import Testing

extension CLITests {
    /// The attack that used to take a family member for good, replayed with the real `rescind`
    /// binary: a thief with a copy of the owner's unlocked phone profile rotates the owner's
    /// identity and revokes a grantee, before the owner notices. The rotation only waits; the
    /// owner's laptop is told at its next command, vetoes it, retires the phone, rotates with the
    /// recovery words and still owns Emma.
    @Suite("rescind identity pending / veto") struct Governance {
        @Test(.timeLimit(.minutes(4)))
        func theThiefActsFirstAndTheOwnerStillOwnsEmma() async throws {
            try #require(FileManager.default.isExecutableFile(atPath: RescindProcess.agentBinary.path))
            try await CLITestBed.with { bed in
                let phone = try await bed.person("Adult A")
                let adultB = try await bed.person("Adult B")
                let laptop = try await Devices.secondDevice(of: phone, name: "Adult A's laptop", bed: bed)
                try await bed.grant.ageEnrolments(of: try #require(UUID(uuidString: phone.userID)))  // the laptop is months old
                let emma = try await phone.ok(["family-member", "create"]).trimmed
                for text in ["blood type O+", "allergy: penicillin", "MMR vaccination, dose 1"] {
                    try await phone.ok(["record", "add", emma, "--text", text])
                }
                try await phone.ok(["grant", emma, "--to", adultB.userID])
                let thief = try Devices.copy(of: phone, to: "stolen-phone", bed: bed)

                // The thief acts first: a rotation (only pending), then a revocation of B.
                let begun = try await thief.ok(["identity", "rotate"])
                #expect(begun.contains("identity rotation pending"), "\(begun)")
                let operation = try #require(begun.firstMatch(of: /operation ([0-9a-f-]{36})/).map { String($0.1) }, "\(begun)")
                try await thief.ok(["revoke", emma, "--user", adultB.userID, "--yes"])

                // The laptop's next command, whatever it is, shows the pending rotation first.
                let shown = try await laptop.run(["identity", "show"])
                #expect(shown.status == 0 && shown.stdout.contains("generation        1"), "\(shown)")
                #expect(shown.stderr.contains("! \(operation)  identity rotation begun by device \(phone.deviceID)"), "\(shown)")
                #expect(shown.stderr.contains("rescind identity veto \(operation)"), "\(shown)")
                #expect(try await laptop.ok(["identity", "pending"]).contains(operation))
                let vetoed = try await laptop.ok(["identity", "veto", operation])
                #expect(vetoed.contains("operation \(operation) vetoed") && vetoed.contains("device \(phone.deviceID) is frozen"), "\(vetoed)")

                // The frozen phone can change nothing about who A is; it cannot approve or veto either.
                try await thief.run(["identity", "rotate"]).expectOneLineError("device_frozen")
                try await thief.run(["device", "retire", laptop.deviceID]).expectOneLineError("device_frozen")
                try await thief.run(["identity", "approve", operation]).expectOneLineError("device_frozen")

                // A retires the phone and rotates with the recovery words; Emma is still A's, every record reads.
                try await laptop.ok(["device", "retire", phone.deviceID])
                let words = try #require(phone.recoveryWords).path
                #expect(try await laptop.ok(["identity", "rotate", "--words-file", words]).contains("identity rotated: generation 2"))
                let rotated = try await laptop.ok(["rotate", emma])
                #expect(rotated.contains("rotated \(emma): FMK v3"), "\(rotated)")
                let records = try await laptop.ok(["record", "show", emma, "--all"])
                for text in ["blood type O+", "allergy: penicillin", "MMR vaccination, dose 1"] { #expect(records.contains(text), "\(records)") }
                let refused = try await thief.run(["record", "show", emma, "--all"])
                #expect(refused.status != 0, "\(refused)")
                #expect(try await laptop.ok(["identity", "pending", "--all"]).contains("\(operation)  identity rotation begun by device \(phone.deviceID): vetoed (device)"))
            }
        }

        /// A's only device is stolen and the thief acts first. With the paper words alone, A makes a
        /// new laptop that holds A's keys from the key backup, retires the phone, rotates away from
        /// everything it held and still owns Emma; a second new device from the words gets the new keys,
        /// and the two devices the words made rotate again together, at once, without the words.
        @Test(.timeLimit(.minutes(4)))
        func theWordsAloneMakeANewDeviceThatStillOwnsEmma() async throws {
            try await CLITestBed.with { bed in
                let phone = try await bed.person("Adult A")
                let adultB = try await bed.person("Adult B")
                let words = try #require(phone.recoveryWords).path
                let emma = try await phone.ok(["family-member", "create"]).trimmed
                let texts = ["blood type O+", "allergy: penicillin"]
                for text in texts { try await phone.ok(["record", "add", emma, "--text", text]) }
                let thief = try Devices.copy(of: phone, to: "stolen-phone", bed: bed)

                // The thief moves first: a rotation (it only waits), and a backup it could open.
                #expect(try await thief.ok(["identity", "rotate"]).contains("identity rotation pending"))
                try await thief.run(["identity", "backup", "--words-file", try #require(adultB.recoveryWords).path])
                    .expectOneLineError("recovery_key_not_registered")

                // A, on a new laptop with the paper words only.
                func recoveredDevice(_ name: String) async throws -> CLIProfile {
                    let blank = try bed.profile(name)
                    let enrolled = try await blank.ok(["identity", "recover", "--user", phone.userID, "--enrol", name, "--words-file", words])
                    let deviceID = try #require(enrolled.firstMatch(of: /enrolled device ([0-9a-f-]{36})/).map { String($0.1) }, "\(enrolled)")
                    return CLIProfile(
                        name: name, directory: blank.directory, keyFile: blank.keyFile, grantService: blank.grantService,
                        auditService: blank.auditService, userID: phone.userID, deviceID: deviceID)
                }
                let laptop = try await recoveredDevice("Adult A's new laptop")
                #expect(try await laptop.ok(["identity", "recover", "--user", phone.userID, "--retire", phone.deviceID, "--words-file", words])
                    .contains("retired device \(phone.deviceID)"))
                let rotated = try await laptop.ok(["identity", "rotate", "--words-file", words])
                #expect(rotated.contains("identity rotated: generation 2") && rotated.contains("key backup        renewed"), "\(rotated)")
                #expect(try await laptop.ok(["rotate", emma]).contains("rotated \(emma): FMK v2"))
                let records = try await laptop.ok(["record", "show", emma, "--all"])
                for text in texts { #expect(records.contains(text), "\(records)") }
                #expect(try await thief.run(["record", "show", emma, "--all"]).status != 0)
                try await thief.run(["identity", "backup", "--words-file", words]).expectOneLineError("device_retired")

                // The words now give back the new keys, and nothing else.
                let tablet = try await recoveredDevice("Adult A's new tablet")
                let read = try await tablet.ok(["record", "show", emma, "--all"])
                for text in texts { #expect(read.contains(text), "\(read)") }
                #expect(try await tablet.ok(["identity", "show"]).contains("key backup        current"))

                // The words certified both devices they enrolled: a rotation begun on the tablet and
                // approved on the laptop, no words at hand, takes effect at once, and Emma follows it
                // at once for every verifier — two certified keys are two devices.
                let begun = try await tablet.ok(["identity", "rotate"])
                let operation = try #require(begun.firstMatch(of: /operation ([0-9a-f-]{36})/).map { String($0.1) }, "\(begun)")
                let approved = try await laptop.ok(["identity", "approve", operation])
                #expect(approved.contains("\(operation) applied"), "\(approved)")
                let finished = try await tablet.ok(["identity", "rotate"])
                #expect(finished.contains("identity rotated: generation 3"), "\(finished)")
                let again = try await tablet.ok(["record", "show", emma, "--all"])
                for text in texts { #expect(again.contains(text), "\(again)") }
            }
        }

        /// `rescind identity recovery-key`: from one device it waits for the delay; with the
        /// current words it takes effect at once, and only the new words stand for the user then.
        /// Emma's history still names the old words, so a rotation the new words approve moves
        /// Emma only an hour on: the command says so, moves nothing, and the profile keeps reading.
        @Test(.timeLimit(.minutes(3)))
        func aNewRecoveryKeyWaitsOrTakesEffectWithTheOldWords() async throws {
            try await CLITestBed.with { bed in
                let phone = try await bed.person("Adult A")
                let emma = try await phone.ok(["family-member", "create"]).trimmed
                try await phone.ok(["record", "add", emma, "--text", "blood type O+"])
                let pending = try await phone.ok(["identity", "recovery-key"])
                #expect(pending.contains("new recovery key pending: operation") && pending.contains("unless vetoed"), "\(pending)")
                let operation = try #require(pending.firstMatch(of: /operation ([0-9a-f-]{36})/).map { String($0.1) }, "\(pending)")
                try await phone.ok(["identity", "cancel", operation])

                let old = try #require(phone.recoveryWords).path
                let replaced = try await phone.ok(["identity", "recovery-key", "--words-file", old])
                #expect(replaced.contains("new recovery key registered"), "\(replaced)")
                let paper = bed.root.appendingPathComponent("paper/new-words.txt")
                try CLITests.Identity.recoveryWords(in: replaced).joined(separator: " ").write(to: paper, atomically: true, encoding: .utf8)
                try await phone.run(["identity", "recover", "--user", phone.userID, "--clear", phone.deviceID, "--words-file", old])
                    .expectOneLineError("bad_signature")
                #expect(try await phone.ok(["identity", "recover", "--user", phone.userID, "--clear", phone.deviceID, "--words-file", paper.path])
                    .contains("cleared device \(phone.deviceID)"))

                try await phone.run(["identity", "rotate", "--words-file", paper.path])
                    .expectOneLineError("follow the new keys only from", "nothing was moved")
                #expect(try await phone.ok(["record", "show", emma, "--all"]).contains("blood type O+"))
            }
        }
    }
}
