import Foundation
import Testing

extension CLITests {
    /// The owner's stolen phone, end to end with the real `rescind` binary: one resumable command
    /// retires the phone, waits for the owner's identity rotation, then rotates every family member
    /// they own revoking nobody; a thief with a copy of the phone's profile gets nothing afterwards.
    @Suite("rescind rotate --everywhere --stolen-device") struct OwnerStolenDevice {
        @Test(.timeLimit(.minutes(4)))
        func retireWaitForTheIdentityRotationThenRotateEverything() async throws {
            try #require(FileManager.default.isExecutableFile(atPath: RescindProcess.agentBinary.path))
            try await CLITestBed.with { bed in
                let phone = try await bed.person("Adult A")
                let adultB = try await bed.person("Adult B")
                let laptop = try await Devices.secondDevice(of: phone, name: "Adult A's laptop", bed: bed)
                let tablet = try await Devices.secondDevice(of: phone, name: "Adult A's tablet", bed: bed)
                let thief = try Devices.copy(of: phone, to: "phone", bed: bed)
                var members: [String] = []
                for name in ["Emma", "Liam"] {
                    let member = try await phone.ok(["family-member", "create"]).trimmed
                    try await phone.ok(["record", "add", member, "--text", "\(name): before the theft"])
                    try await phone.ok(["grant", member, "--to", adultB.userID])
                    members.append(member)
                }
                let command = ["rotate", "--everywhere", "--stolen-device", phone.deviceID, "--reason", "phone stolen"]
                try await laptop.run(["rotate", "--everywhere"]).expectUsageError("--stolen-device")
                try await laptop.run(["rotate", members[0], "--everywhere", "--stolen-device", phone.deviceID]).expectUsageError()

                // 1. The phone is retired at once; the rotation waits for new identity keys.
                let first = try await laptop.ok(command)
                #expect(first.contains("retired device \(phone.deviceID)"), "\(first)")
                // Only D is retired; the owner's other devices are listed to check (one the thief enrolled would be too).
                #expect(first.contains("your other active devices") && first.contains("  \(tablet.deviceID)  "), "\(first)")
                #expect(first.contains("abandons at once any revocation or rotation it began"), "\(first)")
                #expect(!first.contains("  \(phone.deviceID)  ") && !first.contains("  \(laptop.deviceID)  "), "\(first)")
                #expect(first.contains("waiting: your identity keys were not rotated"), "\(first)")
                #expect(first.contains("done: rotated 0/0"), "\(first)")
                let refused = try await thief.run(["record", "show", members[0], "--all"])
                #expect(refused.status != 0, "\(refused)")

                // 2. A rotates the identity keys on the laptop (at once, with the recovery words); the
                // same command rotates both family members.
                let words = try #require(phone.recoveryWords).path
                #expect(try await laptop.ok(["identity", "rotate", "--words-file", words]).contains("generation 2"))
                let done = try await laptop.ok(command)
                #expect(done.contains("resuming") && !done.contains("retired device"), "\(done)")
                for member in members {
                    #expect(done.contains("rotated \(member): FMK v2, 1 records re-encrypted, nobody revoked"), "\(done)")
                }
                #expect(done.contains("done: rotated 2/2") && !done.contains("left:"), "\(done)")

                // 3. B still reads everything, and what A writes afterwards; the thief's copy gets nothing.
                try await laptop.ok(["record", "add", members[0], "--text", "Emma: after the theft"])
                let read = try await adultB.ok(["record", "show", members[0], "--all"])
                #expect(read.contains("after the theft") && read.contains("before the theft"), "\(read)")
                let attempt = try await thief.run(["record", "show", members[0], "--all"])
                #expect(attempt.status != 0 && !attempt.stdout.contains("after the theft"), "\(attempt)")

                // One family member alone, again: v3, B still reads it.
                let single = try await laptop.ok(["rotate", members[1]])
                #expect(single.contains("rotated \(members[1]): FMK v3, 1 records re-encrypted"), "\(single)")
                #expect(try await adultB.ok(["record", "show", members[1], "--all"]).contains("Liam: before the theft"))
            }
        }
    }
}
