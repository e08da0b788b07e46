import Foundation
import RescindClient
import RescindCrypto
import RescindProtocol
import RescindTestSupport
import Testing

extension AuditTestBed {
    /// Publishes a key chain violation on `device_acks` as an agent does (signed envelope).
    func publish(_ violation: KeyChainViolation, signedBy key: Ed25519.PrivateKey, signer: String? = nil) async throws {
        let message = try SignedMessage(
            schema: KeyChainViolation.schema, signer: signer ?? "device:\(violation.reporterDeviceID.uuidString.lowercased())",
            payload: violation, key: key)
        try await publishRaw(.deviceAcks, key: violation.reporterDeviceID, value: try message.encoded())
    }

    func violationCount() async throws -> Int { try await count("SELECT count(*) FROM key_chain_violations") }

    func rejectionReasons() async throws -> [String] {
        try await withConnection { connection in
            try await connection.query("SELECT reason FROM rejected_messages ORDER BY rejection_id").map {
                try $0.decode(String.self, column: 0)
            }
        }
    }
}

extension TestFamily {
    func violation(
        by device: Device, code: KeyChainViolation.Code = .wrappedKeyMismatch, detail: String = "wrapped FMK v3 is not the one the owner's statement names"
    ) -> KeyChainViolation {
        KeyChainViolation(
            code: code, familyMemberID: familyMemberID, reporterUserID: device.userID, reporterDeviceID: device.id,
            offeredFMKVersion: 3, statementSeq: 3, verifiedSeq: 2, detail: detail, detectedAt: Timestamp.truncated(Date()))
    }
}

/// Key chain violations reach the audit service from agents (signed on `device_acks`) and from
/// the CLI (HTTPS, the device's grant-service token), are stored once, announced as
/// `key_chain_violation` and logged for the owner; a forged, unsigned, oversized or replayed
/// report is refused and changes nothing stored. The adversary here is a writer on
/// `device_acks` (or any caller of the HTTP API) without the reporting device's key or token.
@Suite(.serialized) struct KeyChainViolationTests {
    @Test(.timeLimit(.minutes(2)))
    func anAgentSignedReportIsStoredAnnouncedAndLoggedForTheOwner() async throws {
        try await AuditTestBed.with { bed in
            let emma = TestFamily()
            let phone = TestFamily.Device(userID: UUID())
            try await bed.publish(emma.accessEvent(.familyMemberCreated))
            // The audit service learns the phone's key from a revocation event that lists it.
            let revocation = emma.revocation(of: UUID(), devices: [phone])
            try await bed.publish(revocation)
            try await bed.eventually("tracked") { try await bed.deviceStates(revocation.eventID).count == 1 }

            let violation = emma.violation(by: phone)
            let envelope = try SignedMessage(
                schema: KeyChainViolation.schema, signer: "device:\(phone.id.uuidString.lowercased())", payload: violation,
                key: phone.key
            ).encoded()
            try SchemaTests.expectConforms(envelope, to: KeyChainViolation.schema)
            try await bed.publishRaw(.deviceAcks, key: phone.id, value: envelope)
            try await bed.eventually("stored") { try await bed.violationCount() == 1 }

            let verification = try await bed.withConnection { connection in
                try await connection.query("SELECT verification FROM key_chain_violations").first!.decode(String.self, column: 0)
            }
            #expect(verification == "device_signature")
            let logged = try await bed.count(
                "SELECT count(*) FROM audit_log WHERE event_type = 'key_chain_violation' AND source_id = '\(violation.reportID)'")
            #expect(logged == 1)
            let notifications = try await bed.withConnection { connection in
                try await connection.query("SELECT envelope FROM notification_outbox WHERE kind = 'key_chain_violation'").map {
                    try $0.decode(Data.self, column: 0)
                }
            }
            #expect(notifications.count == 1)
            for envelope in notifications { try SchemaTests.expectConforms(envelope, to: AuditNotification.schema) }
            let announced = try SignedMessage<AuditNotification>.verified(
                from: notifications[0], schema: AuditNotification.schema, key: bed.service.auditKey
            ).payload
            #expect(announced.violation == violation)
            #expect(announced.reporterVerification == .deviceSignature)
            #expect(announced.deviceID == phone.id && announced.familyMemberID == emma.familyMemberID)

            // The operator lists it, newest first.
            let listed = try await bed.get("/v1/key-chain-violations", token: bed.operatorToken)
            #expect(listed.status == 200)
            let list = try CanonicalJSON.decode(KeyChainViolationList.self, from: listed.body)
            #expect(list.violations.map(\.violation) == [violation])
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func aReportFromADeviceWithNoKnownKeyIsShownAsUnverifiedAndKeptOutOfTheOwnersLog() async throws {
        try await AuditTestBed.with { bed in
            let emma = TestFamily()
            try await bed.publish(emma.accessEvent(.familyMemberCreated))
            let stranger = TestFamily.Device(userID: UUID())
            try await bed.publish(emma.violation(by: stranger), signedBy: stranger.key)
            try await bed.eventually("stored") { try await bed.violationCount() == 1 }
            #expect(try await bed.count("SELECT count(*) FROM key_chain_violations WHERE verification = 'unverified_device'") == 1)
            #expect(try await bed.count("SELECT count(*) FROM audit_log WHERE event_type = 'key_chain_violation'") == 0)
            #expect(try await bed.count("SELECT count(*) FROM notification_outbox WHERE kind = 'key_chain_violation'") == 1)
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func forgedUnsignedOversizedAndReplayedReportsAreQuarantinedAndChangeNothing() async throws {
        try await AuditTestBed.with { bed in
            let emma = TestFamily()
            let phone = TestFamily.Device(userID: UUID())
            try await bed.publish(emma.accessEvent(.familyMemberCreated))
            let revocation = emma.revocation(of: UUID(), devices: [phone])
            try await bed.publish(revocation)
            try await bed.eventually("tracked") { try await bed.deviceStates(revocation.eventID).count == 1 }
            let genuine = emma.violation(by: phone)
            try await bed.publish(genuine, signedBy: phone.key)
            try await bed.eventually("the genuine report") { try await bed.violationCount() == 1 }
            let before = try await bed.count("SELECT count(*) FROM audit_log")

            // Forged: the phone's id, another key.
            try await bed.publish(emma.violation(by: phone), signedBy: Ed25519.PrivateKey())
            // Unsigned: an empty signature.
            var unsigned = try JSONSerialization.jsonObject(
                with: try SignedMessage(
                    schema: KeyChainViolation.schema, signer: "device:\(phone.id.uuidString.lowercased())",
                    payload: emma.violation(by: phone), key: phone.key
                ).encoded()) as! [String: Any]
            unsigned["signature"] = ""
            try await bed.publishRaw(.deviceAcks, key: phone.id, value: try JSONSerialization.data(withJSONObject: unsigned))
            // Oversized and NUL-carrying details, signed by the phone itself.
            try await bed.publish(emma.violation(by: phone, detail: String(repeating: "x", count: 100_000)), signedBy: phone.key)
            try await bed.publish(emma.violation(by: phone, detail: "a\u{0}b"), signedBy: phone.key)
            // Signed as another device than the one it names.
            try await bed.publish(emma.violation(by: phone), signedBy: phone.key, signer: "device:\(UUID().uuidString.lowercased())")
            // Replayed: the genuine report again, at a new offset.
            try await bed.publish(genuine, signedBy: phone.key)

            let expected = ["bad_signature", "bad_signature", "invalid_field", "invalid_field", "unknown_signer", "duplicate_report"]
            try await bed.eventually("six rejections") { try await bed.rejectionReasons().count == expected.count }
            #expect(try await bed.rejectionReasons().sorted() == expected.sorted())
            #expect(try await bed.violationCount() == 1)
            #expect(try await bed.count("SELECT count(*) FROM audit_log") == before)
            #expect(try await bed.count("SELECT count(*) FROM notification_outbox WHERE kind = 'key_chain_violation'") == 1)
            #expect(try await bed.count("SELECT count(*) FROM notification_outbox WHERE kind = 'message_rejected'") == expected.count)
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func theCLIReportsAsItsDeviceAndBadReportsGetAClear4xx() async throws {
        try await GrantServiceHarness.with { grant in
            let adultA = try await EndToEndTests.member("Adult A", on: grant)
            let adultB = try await EndToEndTests.member("Adult B", on: grant)
            try await AuditTestBed.with({ $0.grantService.url = grant.baseURL.absoluteString }) { bed in
                let emma = TestFamily(ownerUserID: adultA.userID)
                try await bed.publish(emma.accessEvent(.familyMemberCreated))
                try await bed.eventually("created") { try await bed.count("SELECT count(*) FROM family_members") == 1 }
                let audit = AuditServiceClient(
                    baseURL: bed.service.baseURL, grantService: adultB.session.client, tls: bed.service.clientTLS)
                let device = TestFamily.Device(userID: adultB.userID)
                var violation = emma.violation(by: device, code: .fork)
                violation.reporterDeviceID = adultB.session.deviceID

                let receipt = try await audit.reportKeyChainViolation(violation)
                #expect(receipt.verification == .deviceToken && receipt.reportID == violation.reportID)
                #expect(try await bed.violationCount() == 1)
                #expect(try await bed.count("SELECT count(*) FROM audit_log WHERE event_type = 'key_chain_violation'") == 1)
                #expect(try await bed.count("SELECT count(*) FROM notification_outbox WHERE kind = 'key_chain_violation'") == 1)

                func refused(_ body: Data, token: String?) async throws -> (Int, String) {
                    let answer = try await TestHTTP.send(
                        "POST", bed.service.baseURL.appendingPathComponent("v1/key-chain-violations"),
                        headers: [("Content-Type", "application/json")] + (token.map { [("Authorization", "Bearer \($0)")] } ?? []),
                        body: body)
                    let code = (try? CanonicalJSON.decode(APIErrorBody.self, from: answer.body))?.error.code ?? ""
                    return (answer.status, code)
                }
                let token = try await adultB.session.client.bearerToken()
                var fresh = violation
                fresh.reportID = UUID()
                #expect(try await refused(try CanonicalJSON.encode(fresh), token: nil) == (401, "unauthenticated"))
                #expect(try await refused(try CanonicalJSON.encode(violation), token: token) == (409, "duplicate_report"))
                var someoneElse = fresh
                someoneElse.reporterDeviceID = adultA.session.deviceID
                #expect(try await refused(try CanonicalJSON.encode(someoneElse), token: token).0 == 403)
                var nul = fresh
                nul.detail = "a\u{0}b"
                #expect(try await refused(try CanonicalJSON.encode(nul), token: token) == (422, "invalid_field"))
                var long = fresh
                long.detail = String(repeating: "x", count: 501)
                #expect(try await refused(try CanonicalJSON.encode(long), token: token) == (422, "invalid_field"))
                #expect(try await refused(Data(repeating: 0x20, count: 20_000), token: token) == (413, "payload_too_large"))
                var extra = try JSONSerialization.jsonObject(with: try CanonicalJSON.encode(fresh)) as! [String: Any]
                extra["fmk"] = "c2VjcmV0"
                #expect(try await refused(try JSONSerialization.data(withJSONObject: extra), token: token) == (400, "bad_request"))
                // Nothing the refused requests carried was stored.
                #expect(try await bed.violationCount() == 1)
                #expect(try await bed.count("SELECT count(*) FROM notification_outbox WHERE kind = 'key_chain_violation'") == 1)

                // An outside client's report: ids in lower case, a timestamp without milliseconds.
                // Not the canonical form, and unsigned, so accepted and kept canonical.
                var outside = try JSONSerialization.jsonObject(with: try CanonicalJSON.encode(fresh)) as! [String: Any]
                for key in ["report_id", "family_member_id", "reporter_user_id", "reporter_device_id"] {
                    outside[key] = (outside[key] as! String).lowercased()
                }
                outside["detected_at"] = "2026-11-29T12:00:00Z"
                let accepted = try await TestHTTP.send(
                    "POST", bed.service.baseURL.appendingPathComponent("v1/key-chain-violations"),
                    headers: [("Content-Type", "application/json"), ("Authorization", "Bearer \(token)")],
                    body: try JSONSerialization.data(withJSONObject: outside))
                #expect(accepted.status == 201, "\(String(decoding: accepted.body, as: UTF8.self))")
                #expect(try await bed.violationCount() == 2)

                // The reporter the CLI uses never throws and delivers.
                var second = fresh
                second.reportID = UUID()
                await AuditServiceViolationReporter(audit: audit, notice: { Issue.record("not delivered: \($0)") })
                    .report(second)
                #expect(try await bed.violationCount() == 3)
            }
        }
    }
}
