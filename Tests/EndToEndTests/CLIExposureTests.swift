import Foundation
import RescindProtocol
import RescindTestSupport
import Testing

extension CLITests {
    @Suite("rescind revocation --exposure") struct Exposure {
        /// The owner's exposure report through the `rescind` binary, against the real grant and
        /// audit services: B's CLI profile read both records before A revoked B.
        @Test(.timeLimit(.minutes(3)))
        func theOwnerPrintsWhatTheRevokedUsersDevicesHadFetched() async throws {
            try await CLITestBed.with(audit: true) { bed in
                let adultA = try await bed.person("Adult A")
                let adultB = try await bed.person("Adult B")
                let emma = try await adultA.ok(["family-member", "create"]).trimmed
                try await adultA.ok(["record", "add", emma, "--text", "penicillin allergy"])
                try await adultA.ok(["record", "add", emma, "--text", "MMR vaccination, dose 1"])
                try await adultA.ok(["grant", emma, "--to", adultB.userID])
                #expect(try await adultB.ok(["record", "show", emma, "--all"]).contains("penicillin allergy"))
                let revoked = try await adultA.ok(["revoke", emma, "--user", adultB.userID, "--yes"])
                let eventID = try #require(
                    revoked.firstMatch(of: /\(event ([0-9a-f-]{36})\)/).map { String($0.output.1) }, "\(revoked)")

                let report = try await CLITestBed.eventually("the audit service's record of the revocation") { () -> String? in
                    let output = try await adultA.run(["revocation", eventID, "--exposure"])
                    return output.status == 0 && !output.stdout.contains("not_tracked") ? output.stdout : nil
                }
                #expect(report.hasPrefix("exposure of revocation \(eventID.prefix(8)): user \(adultB.userID.prefix(8))"), "\(report)")
                #expect(report.contains("FMK v1 → v2, 2 records"), "\(report)")
                #expect(report.contains("\(adultB.deviceID.prefix(8))"), "\(report)")
                #expect(report.contains("(interactive)"), "\(report)")
                #expect(report.contains("fetched: FMK v1, 2 of 2 records (change-feed position "), "\(report)")
                #expect(report.contains("erasure: not commanded (an interactive client keeps no key or record beyond the process)"), "\(report)")
                #expect(report.contains("no device of the revoked user is known to still hold ciphertext and the old key"), "\(report)")
                #expect(report.contains("what revocation cannot undo:") && report.contains("Plaintext already seen"), "\(report)")

                // The document, opened locally, as JSON that conforms to its schema.
                let json = try await adultA.ok(["revocation", eventID, "--exposure", "--json"])
                let problems = try JSONSchemaValidator.load(RevocationExposure.schema).problems(Data(json.utf8))
                #expect(problems.isEmpty, "\(problems)")
                let document = try CanonicalJSON.decode(RevocationExposure.self, from: Data(json.utf8))
                #expect(document.devices.map { $0.deviceID.uuidString.lowercased() } == [adultB.deviceID])
                #expect(document.devices.first?.recordsFetched == 2)

                // Only the owner who committed it: B (the revoked user) and junk get one clear line.
                try await adultB.run(["revocation", eventID, "--exposure"]).expectOneLineError("404")
                try await adultA.run(["revocation", UUID().uuidString.lowercased(), "--exposure"]).expectOneLineError("404")
                try await adultA.run(["revocation", "nonsense", "--exposure"]).expectUsageError()
            }
        }
    }
}
