import Foundation
import Testing

extension CLITests {
    /// `rescind device list | retire`, and the seeds' stolen phone played with the CLI and
    /// the agent as a user and a thief would run them.
    @Suite("rescind device") struct Devices {
        /// Enrols a second device of `person` the way a user does: `rescind-agent
        /// provision-device` on the profile (signed with the identity key in its keystore),
        /// then `rescind-agent enrol --bundle` into a new profile directory.
        static func secondDevice(of person: CLIProfile, name: String, bed: CLITestBed) async throws -> CLIProfile {
            let slug = name.lowercased().replacingOccurrences(of: " ", with: "-").replacingOccurrences(of: "'", with: "")
            let bundle = bed.root.appendingPathComponent("\(slug).bundle").path
            let provisioned = try await agent(
                ["provision-device", "--name", name, "--kind", "laptop", "--out", bundle], directory: person.directory,
                keyFile: person.keyFile, bed: bed)
            #expect(provisioned.status == 0, "\(provisioned)")
            let blank = try bed.profile(name)
            let enrolled = try await agent(["enrol", "--bundle", bundle], directory: blank.directory, keyFile: blank.keyFile, bed: bed)
            #expect(enrolled.status == 0, "\(enrolled)")
            let deviceID = try #require(enrolled.stdout.split(separator: " ").dropFirst(2).first, "\(enrolled)")
            return CLIProfile(
                name: name, directory: blank.directory, keyFile: blank.keyFile, grantService: blank.grantService,
                auditService: blank.auditService, userID: person.userID, deviceID: String(deviceID))
        }

        /// `rescind-agent arguments` on the keystore in `directory`, unlocked by `keyFile`.
        static func agent(_ arguments: [String], directory: URL, keyFile: URL, bed: CLITestBed) async throws -> RescindProcess.Output {
            try await RescindProcess.run(
                arguments,
                environment: [
                    "RESCIND_AGENT_DATA_DIR": directory.path, "RESCIND_AGENT_KEY_FILE": keyFile.path,
                    "RESCIND_AGENT_GRANT_SERVICE_URL": bed.grant.baseURL.absoluteString,
                    "RESCIND_AGENT_GRANT_SERVICE_KEY": Data(bed.grant.serviceKey.rawRepresentation).base64EncodedString(),
                    "RESCIND_AGENT_BUNDLE_PASSPHRASE": "a one-time bundle passphrase",
                    "RESCIND_AGENT_ARGON2_OPSLIMIT": "1", "RESCIND_AGENT_ARGON2_MEMLIMIT_MIB": "8",
                    "RESCIND_KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:9092",  // required by the agent; never dialled here
                ],
                executable: RescindProcess.agentBinary)
        }

        /// A byte-for-byte copy of a profile and its key file: what a thief takes from an
        /// unlocked device.
        static func copy(of profile: CLIProfile, to name: String, bed: CLITestBed) throws -> CLIProfile {
            let directory = bed.root.appendingPathComponent("stolen/\(name)")
            let keyFile = bed.root.appendingPathComponent("stolen/\(name).key")
            try FileManager.default.createDirectory(at: directory.deletingLastPathComponent(), withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: profile.directory, to: directory)
            try FileManager.default.copyItem(at: profile.keyFile, to: keyFile)
            try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: directory.path)
            for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
                try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: directory.appendingPathComponent(file).path)
            }
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keyFile.path)
            return CLIProfile(
                name: name, directory: directory, keyFile: keyFile, grantService: profile.grantService,
                auditService: profile.auditService, userID: profile.userID, deviceID: profile.deviceID)
        }

        /// The columns of a `device list` row (separated by two spaces or more).
        static func cells(_ row: String) -> [String] {
            row.components(separatedBy: "  ").map { $0.trimmed }.filter { !$0.isEmpty }
        }

        /// The `device list` row of a device id.
        static func row(_ deviceID: String, in listing: String) -> String? {
            listing.split(separator: "\n").map(String.init).first { $0.hasPrefix(deviceID) }
        }

        @Test("a stolen phone: listed, retired from the laptop, then its thief gets nothing", .timeLimit(.minutes(4)))
        func stolenPhone() async throws {
            // Adversary: a thief with a byte-for-byte copy of Adult B's phone profile and the
            // key file that unlocks it (an unlocked phone), running the real `rescind` and
            // `rescind-agent`.
            try #require(FileManager.default.isExecutableFile(atPath: RescindProcess.agentBinary.path))
            try await CLITestBed.with { bed in
                let phone = try await bed.person("Adult B")
                let laptop = try await Self.secondDevice(of: phone, name: "Adult B's laptop", bed: bed)

                let listing = try await laptop.ok(["device", "list"])
                #expect(listing.hasPrefix("device"), "\(listing)")
                let phoneRow = try #require(Self.row(phone.deviceID, in: listing), "\(listing)")
                let laptopRow = try #require(Self.row(laptop.deviceID, in: listing), "\(listing)")
                #expect(phoneRow.contains("Adult B's rescind CLI") && !phoneRow.contains("never"), "\(listing)")
                #expect(Self.cells(laptopRow).prefix(3) == [laptop.deviceID, "Adult B's laptop", "laptop"], "\(listing)")
                #expect(laptopRow.hasSuffix("(this device)"), "\(listing)")
                #expect(listing.split(separator: "\n").count == 3, "\(listing)")

                let thief = try Self.copy(of: phone, to: "thief", bed: bed)
                // Before the user reacts, the copy is the phone: it signs in like it.
                #expect(Self.row(laptop.deviceID, in: try await thief.ok(["device", "list"])) != nil)

                let retired = try await laptop.ok(["device", "retire", phone.deviceID])
                #expect(retired.contains("retired device \(phone.deviceID)"), "\(retired)")

                // After `device retire`: no call, no new token, no enrolment, not even with the
                // identity key the phone's keystore holds.
                try await thief.run(["device", "list"]).expectOneLineError("HTTP 401")
                try await thief.run(["family-member", "list"]).expectOneLineError("HTTP 401")
                try await thief.run(["device", "retire", laptop.deviceID]).expectOneLineError("HTTP 401")
                let rogue = try await Self.agent(
                    ["provision-device", "--name", "rogue", "--out", bed.root.appendingPathComponent("rogue.bundle").path],
                    directory: thief.directory, keyFile: thief.keyFile, bed: bed)
                #expect(rogue.status != 0 && rogue.stderr.contains("401"), "\(rogue)")

                let after = try await laptop.ok(["device", "list"])
                #expect(after.split(separator: "\n").count == 3, "a device was added: \(after)")
                let retiredRow = try #require(Self.row(phone.deviceID, in: after), "\(after)")
                #expect(retiredRow.hasSuffix("Z"), "the retired column is empty: \(after)")
                #expect(try await laptop.ok(["family-member", "list"]).isEmpty)
            }
        }

        /// The check-in lines under a device's row in a `device list`.
        static func checkIns(of deviceID: String, in listing: String) -> [String] {
            let lines = listing.split(separator: "\n").map(String.init)
            guard let start = lines.firstIndex(where: { $0.hasPrefix(deviceID) }) else { return [] }
            return Array(lines[(start + 1)...].prefix { $0.hasPrefix("  family member ") })
        }

        @Test("device list shows the key version and change-feed position each device last fetched", .timeLimit(.minutes(3)))
        func lastCheckIn() async throws {
            try await CLITestBed.with { bed in
                let adultA = try await bed.person("Adult A")
                let adultB = try await bed.person("Adult B")
                let emma = try await adultA.ok(["family-member", "create"]).trimmed
                for text in ["2025-01-05 MMR vaccination, dose 1", "2025-03-02 ferritin 48 ng/mL"] {
                    _ = try await adultA.ok(["record", "add", emma, "--text", text])
                }
                try await adultA.ok(["grant", emma, "--to", adultB.userID])
                // B's device has fetched nothing of Emma: no line under it.
                let before = try await adultB.ok(["device", "list"])
                #expect(Self.checkIns(of: adultB.deviceID, in: before) == [], "\(before)")
                #expect(before.split(separator: "\n").count == 2, "\(before)")

                // B reads every record: the key (v1) and the feed to its last change.
                _ = try await adultB.ok(["record", "show", emma, "--all"])
                let lastChange = try await bed.grant.withConnection { connection in
                    try await connection.query("SELECT max(change_seq) FROM records").first!.decode(Int64.self, column: 0)
                }
                let listing = try await adultB.ok(["device", "list"])
                let lines = Self.checkIns(of: adultB.deviceID, in: listing)
                #expect(lines.count == 1, "\(listing)")
                let line = try #require(lines.first)
                #expect(line.hasPrefix("  family member \(emma) v1 at seq \(lastChange), "), "\(listing)")
                #expect(line.range(of: #", \d{4}-\d{2}-\d{2} \d{2}:\d{2}Z$"#, options: .regularExpression) != nil, "\(listing)")

                // A's device fetched the key to grant (and never read the feed).
                let aListing = try await adultA.ok(["device", "list"])
                #expect(Self.checkIns(of: adultA.deviceID, in: aListing).map { $0.hasPrefix("  family member \(emma) v1, no change fetched, ") } == [true], "\(aListing)")

                // The help says what the lines mean.
                let help = try await adultB.ok(["device", "list", "--help"])
                #expect(help.contains("what the device could hold") && help.contains("exposure report"), "\(help)")
            }
        }

        @Test("retiring someone else's device is refused and changes nothing", .timeLimit(.minutes(3)))
        func retiringAnotherUsersDevice() async throws {
            try await CLITestBed.with { bed in
                let adultA = try await bed.person("Adult A")
                let adultB = try await bed.person("Adult B")
                try await adultA.run(["device", "retire", adultB.deviceID]).expectOneLineError("HTTP 403", "forbidden")
                try await adultA.run(["device", "retire", "not-a-device"]).expectUsageError()
                let listing = try await adultB.ok(["device", "list"])
                let row = try #require(Self.row(adultB.deviceID, in: listing), "\(listing)")
                #expect(row.hasSuffix("(this device)") && row.contains("  -  "), "\(listing)")

                // A kind given at creation is listed; an unknown one is a usage error.
                let adultC = try bed.profile("Adult C")
                try await adultC.run(["identity", "create", "--name", "Adult C", "--device-kind", "toaster"]).expectUsageError("toaster")
                try await adultC.ok(["identity", "create", "--name", "Adult C", "--device-kind", "desktop"])
                let cListing = try await adultC.ok(["device", "list"])
                let cRow = try #require(cListing.split(separator: "\n").dropFirst().first.map(String.init), "\(cListing)")
                #expect(Self.cells(cRow)[1...2] == ["Adult C's rescind CLI", "desktop"], "\(cRow)")
            }
        }
    }
}
