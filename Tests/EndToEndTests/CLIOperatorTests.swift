import Foundation
import RescindTestSupport
import Testing

extension CLITests {
    @Suite("rescind-admin tail, migrate, keys; rescind-dev stack") struct Operator {
        @Test(.timeLimit(.minutes(3)))
        func tailPrintsTheHarnessTopicsAsLinesOrJSON() async throws {
            try await CLITestBed.with { bed in
                let adultA = try await bed.person("Adult A")
                let adultB = try await bed.person("Adult B")
                let emma = try await adultA.ok(["family-member", "create"]).trimmed
                try await adultA.ok(["record", "add", emma, "--text", "penicillin allergy"])
                try await adultA.ok(["grant", emma, "--to", adultB.userID])
                // The CLI profiles are interactive devices, which no revocation commands; each user
                // also has a device for an agent (provisioned, as a user does, with rescind-agent).
                let laptopA = try await CLITests.Devices.secondDevice(of: adultA, name: "Adult A's laptop", bed: bed)
                let laptopB = try await CLITests.Devices.secondDevice(of: adultB, name: "Adult B's laptop", bed: bed)
                try await adultA.ok(["revoke", emma, "--user", adultB.userID, "--yes"])
                let kafka = [
                    "RESCIND_KAFKA_BOOTSTRAP_SERVERS": bed.grant.bootstrapServers,
                    "RESCIND_TOPIC_PREFIX": bed.grant.topicPrefix,
                ]
                let key = Data(bed.grant.serviceKey.rawRepresentation).base64EncodedString()
                let short = { (id: String) in String(id.prefix(8)) }

                // One command per agent device: A's laptop rotates, B's erases; signatures check out. The
                // laptops' enrolments were announced on the same topic: to each laptop, and B's also to
                // A's devices (A shares Emma with B).
                let commands = try await RescindProcess.admin(
                    ["tail", "device_commands", "--from-beginning", "--limit", "6", "--verify-key", key], environment: kafka,
                    timeout: .seconds(60))
                #expect(commands.status == 0, "\(commands)")
                let lines = commands.stdout.split(separator: "\n")
                #expect(lines.count == 6, "\(commands)")
                #expect(lines.allSatisfy { $0.contains("✓ grant-service: ") && $0.contains("device_commands[") }, "\(commands)")
                #expect(lines.filter { $0.contains("governance enrol_device of user") }.count == 4, "\(commands)")
                #expect(lines.contains { $0.contains("device \(short(laptopB.deviceID)) applied by device \(short(adultB.deviceID)) → device \(short(adultA.deviceID)) (owner)") }, "\(commands)")
                #expect(lines.contains { $0.contains("fmk_rotation → device \(short(laptopA.deviceID)) for \(short(emma)) v2") }, "\(commands)")
                #expect(lines.contains { $0.contains("secure_deletion → device \(short(laptopB.deviceID)) for \(short(emma)) v2") }, "\(commands)")

                let events = try await RescindProcess.admin(
                    ["tail", "revocation_events", "--from-beginning", "--limit", "1"], environment: kafka, timeout: .seconds(60))
                #expect(events.status == 0, "\(events)")
                #expect(events.stdout.contains("revocation of user \(short(adultB.userID)) from \(short(emma)) → FMK v2, 1 records, 2 devices"), "\(events)")

                // --json prints each message as it is on the wire: one JSON document per line.
                let raw = try await RescindProcess.admin(
                    ["tail", "access_events", "--from-beginning", "--limit", "4", "--json"], environment: kafka, timeout: .seconds(60))
                #expect(raw.status == 0, "\(raw)")
                let documents = raw.stdout.split(separator: "\n")
                #expect(documents.count == 4, "\(raw)")
                var schemas: [String] = []
                for document in documents {
                    let object = try JSONSerialization.jsonObject(with: Data(document.utf8)) as? [String: Any]
                    schemas.append(object?["schema"] as? String ?? "")
                    #expect(object?["signature"] != nil, "\(document)")
                }
                // Emma's creation and grant, and the audit copies of the two enrolments' notices.
                #expect(schemas.sorted() == ["rescind.access_event.v1", "rescind.access_event.v1", "rescind.governance_notice.v1", "rescind.governance_notice.v1"])

                // --until-end prints what the topic held when tail started and exits: all of it.
                let held = try await RescindProcess.admin(
                    ["tail", "access_events", "--from-beginning", "--until-end", "--json"], environment: kafka, timeout: .seconds(60))
                #expect(held.status == 0 && held.stdout.split(separator: "\n").count >= 4, "\(held)")
                try await RescindProcess.admin(["tail", "access_events", "--until-end"], environment: kafka)
                    .expectUsageError("--from-beginning")

                // A signature under another key is flagged, not hidden.
                let otherKey = Data(repeating: 7, count: 32).base64EncodedString()
                let forged = try await RescindProcess.admin(
                    ["tail", "device_commands", "--from-beginning", "--limit", "1", "--verify-key", otherKey], environment: kafka,
                    timeout: .seconds(60))
                #expect(forged.status == 0 && forged.stdout.contains("✗ grant-service: "), "\(forged)")

                try await RescindProcess.admin(["tail", "device_commands", "--verify-key", "not base64!"], environment: kafka)
                    .expectOneLineError("--verify-key")
                try await RescindProcess.admin(["tail", "no_such_topic"], environment: kafka).expectUsageError()
            }
        }

        @Test(.timeLimit(.minutes(2)), arguments: ["grant", "audit"])
        func migrateAppliesThenIsUpToDate(service: String) async throws {
            try #require(RescindProcess.isBuilt)
            let schema = "cli_migrate_\(service)_\(UUID().uuidString.prefix(8).lowercased())"
            defer { Task { await TestDatabase.dropSchema(schema) } }
            let directory = GrantServiceHarness.repositoryRoot.appendingPathComponent("migrations/\(service)").path
            let database = ["RESCIND_DATABASE_URL": GrantServiceHarness.databaseURL]
            let arguments = ["migrate", service, "--schema", schema, "--directory", directory]

            let first = try await RescindProcess.admin(arguments, environment: database)
            #expect(first.status == 0 && first.stdout.hasPrefix("\(schema): applied "), "\(first)")
            #expect(try await !TestDatabase.tables(in: schema).isEmpty)
            let second = try await RescindProcess.admin(arguments, environment: database)
            #expect(second.status == 0 && second.stdout.trimmed == "\(schema): up to date", "\(second)")
            await TestDatabase.dropSchema(schema)

            try await RescindProcess.admin(arguments, environment: [:]).expectOneLineError("RESCIND_DATABASE_URL")
            try await RescindProcess.admin(
                ["migrate", service, "--schema", schema, "--directory", "/nonexistent/migrations"], environment: database
            ).expectOneLineError("/nonexistent/migrations")
            try await RescindProcess.admin(
                arguments, environment: ["RESCIND_DATABASE_URL": "postgres://rescind:wrong-password@127.0.0.1:1/rescind"]
            ).expectOneLineError()
            try await RescindProcess.admin(["migrate", "billing"], environment: database).expectUsageError()
        }

        @Test(.timeLimit(.minutes(1)))
        func keysGenerateRefusesToOverwriteAndPublicMatches() async throws {
            try #require(RescindProcess.isBuilt)
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rescind-keys-\(UUID().uuidString.prefix(8))")
            defer { try? FileManager.default.removeItem(at: directory) }
            let path = directory.appendingPathComponent("secrets/grant-service.key").path

            let generated = try await RescindProcess.admin(["keys", "generate", path])
            #expect(generated.status == 0, "\(generated)")
            let publicKey = generated.stdout.trimmed
            #expect(Data(base64Encoded: publicKey)?.count == 32, "\(generated)")
            let contents = try #require(FileManager.default.contents(atPath: path))
            #expect(contents.count == 32)
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)

            try await RescindProcess.admin(["keys", "generate", path]).expectOneLineError("exists; not overwriting")
            #expect(FileManager.default.contents(atPath: path) == contents)
            let shown = try await RescindProcess.admin(["keys", "public", path])
            #expect(shown.status == 0 && shown.stdout.trimmed == publicKey, "\(shown)")

            let short = directory.appendingPathComponent("short.key").path
            #expect(FileManager.default.createFile(atPath: short, contents: Data([1, 2, 3])))
            try await RescindProcess.admin(["keys", "public", short]).expectOneLineError("32-byte key file")
            try await RescindProcess.admin(["keys", "public", directory.appendingPathComponent("missing.key").path])
                .expectOneLineError("32-byte key file")
            try await RescindProcess.admin(["keys", "generate"]).expectUsageError()
        }

        @Test(.timeLimit(.minutes(1)))
        func keysTokenWritesAnOperatorTokenFileWithoutShowingIt() async throws {
            try #require(RescindProcess.isBuilt)
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rescind-token-\(UUID().uuidString.prefix(8))")
            defer { try? FileManager.default.removeItem(at: directory) }
            let path = directory.appendingPathComponent("secrets/audit-operator.token").path

            let written = try await RescindProcess.admin(["keys", "token", path])
            #expect(written.status == 0 && written.stdout.isEmpty, "\(written)")
            let contents = try #require(FileManager.default.contents(atPath: path))
            let token = String(decoding: contents, as: UTF8.self).trimmed
            #expect(token.count >= 43 && token.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }, "\(token)")
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
            try await RescindProcess.admin(["keys", "token", path]).expectOneLineError("exists; not overwriting")
            #expect(FileManager.default.contents(atPath: path) == contents)
        }

        @Test(.timeLimit(.minutes(1)))
        func stackRefusesOutsideTheRepository() async throws {
            try #require(RescindProcess.isBuilt)
            try await RescindProcess.dev(["stack", "status", "--root", "/nonexistent"]).expectOneLineError("scripts/stack.sh not found")
            try await RescindProcess.dev(["stack", "sideways"]).expectUsageError()
        }
    }
}
