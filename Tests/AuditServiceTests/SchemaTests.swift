import Foundation
import RescindCrypto
import RescindKafka
import RescindProtocol
import RescindTestSupport
import Testing

/// Every message type on the topics has a JSON Schema in `schemas/`, and what the
/// services actually publish conforms to it.
@Suite struct SchemaTests {
    static func expectConforms(_ data: Data?, to schema: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let problems = try JSONSchemaValidator.load(schema).problems(try #require(data))
        #expect(problems.isEmpty, "\(schema): \(problems)", sourceLocation: sourceLocation)
    }

    @Test func thereIsASchemaForEveryMessageTypeAndTheValidatorRejectsViolations() throws {
        for schema in [
            RevocationEvent.schema, AccessEvent.schema, DeviceCommand.schema, DeviceAck.schema, AuditNotification.schema,
            KeyChainViolation.schema,
            CommandReissue.schema, ReceiptKeyCertificate.schema, GovernanceNotice.schema,
        ] {
            _ = try JSONSchemaValidator.load(schema)
        }
        let validator = try JSONSchemaValidator.load(DeviceAck.schema)
        let ack = TestFamily.ack(TestFamily.Device(userID: UUID()), for: TestFamily().revocation(of: UUID(), devices: []))
        let good = try SignedMessage(
            schema: DeviceAck.schema, signer: "device:\(ack.deviceID.uuidString.lowercased())", payload: ack,
            key: Ed25519.PrivateKey()
        ).encoded()
        #expect(try validator.problems(good).isEmpty)
        var object = try JSONSerialization.jsonObject(with: good) as! [String: Any]
        var payload = object["payload"] as! [String: Any]
        payload["outcome"] = "maybe"
        payload.removeValue(forKey: "acked_at")
        object["payload"] = payload
        object["signer"] = "grant-service"
        let problems = try validator.problems(try JSONSerialization.data(withJSONObject: object))
        #expect(problems.count == 3, "\(problems)")
    }

    @Test func aReceiptSignedByAReceiptKeyAndItsCertificateConform() throws {
        let device = TestFamily.Device(userID: UUID())
        let receiptKey = Ed25519.PrivateKey()
        let certificate = try ReceiptKeyCertificate.issue(for: receiptKey.publicKey, deviceID: device.id, deviceKey: device.key)
        try Self.expectConforms(try certificate.encoded(), to: ReceiptKeyCertificate.schema)
        var receipt = CommandLifecycleTests.receipt(
            device, for: TestFamily().revocation(of: UUID(), devices: [device]), .notNow, at: Date())
        receipt.receiptCertificate = certificate
        let signed = try SignedMessage(
            schema: DeviceAck.schema, signer: ReceiptKeyCertificate.receiptSigner(device.id), payload: receipt, key: receiptKey
        ).encoded()
        try Self.expectConforms(signed, to: DeviceAck.schema)
        #expect(try SignedMessage<DeviceAck>.decode(signed, schema: DeviceAck.schema).payload == receipt)

        // The certificate inside the ack's schema is the certificate's own schema.
        func body(_ schema: [String: Any]) -> NSDictionary {
            NSDictionary(dictionary: schema.filter { !["$schema", "$id", "title", "description"].contains($0.key) })
        }
        let ack = try JSONSchemaValidator.load(DeviceAck.schema).schema
        let embedded = try #require(
            ((ack["properties"] as? [String: Any])?["payload"] as? [String: Any]).flatMap {
                ($0["properties"] as? [String: Any])?["receipt_certificate"] as? [String: Any]
            })
        #expect(body(embedded) == body(try JSONSchemaValidator.load(ReceiptKeyCertificate.schema).schema))

        // A certificate for another purpose, or with a short key, conforms to neither.
        var object = try JSONSerialization.jsonObject(with: try certificate.encoded()) as! [String: Any]
        var payload = object["payload"] as! [String: Any]
        payload["purpose"] = "answers"
        payload["receipt_public_key"] = Data(count: 31).base64EncodedString()
        object["payload"] = payload
        let bad = try JSONSerialization.data(withJSONObject: object)
        #expect(try JSONSchemaValidator.load(ReceiptKeyCertificate.schema).problems(bad).count == 2)
        #expect((try? SignedMessage<ReceiptKeyCertificate>.decode(bad, schema: ReceiptKeyCertificate.schema)) == nil)
    }

    @Test func theGrantServicesMessagesConform() async throws {
        try await GrantServiceHarness.with { grant in
            let adultA = try await grant.user("Adult A"), adultC = try await grant.user("Adult C")
            let (emma, fmk) = try await adultA.createFamilyMember()
            _ = try await adultA.putRecord(emma, plaintext: Array("record".utf8), fmk: fmk, version: 1)
            _ = try await adultA.grant(emma, to: adultC.keys.userID)
            _ = try await adultA.revoke(emma, user: adultC.keys.userID, reason: "custody change")
            for message in try await grant.messages(.accessEvents, count: 2) {
                try Self.expectConforms(message.value, to: AccessEvent.schema)
            }
            try Self.expectConforms(try await grant.messages(.revocationEvents, count: 1).first?.value, to: RevocationEvent.schema)
            for message in try await grant.messages(.deviceCommands, count: 2) {
                try Self.expectConforms(message.value, to: DeviceCommand.schema)
            }
        }
    }

    @Test func everyKindOfAuditNotificationConforms() async throws {
        try await AuditTestBed.with({ $0.tracking.ackDeadline = .seconds(1) }) { bed in
            let emma = TestFamily()
            let adultC = UUID()
            let phone = TestFamily.Device(userID: adultC), laptop = TestFamily.Device(userID: emma.ownerUserID)
            let revocation = emma.revocation(of: adultC, devices: [phone, laptop])
            try await bed.publish(revocation)
            try await bed.publish(TestFamily.ack(phone, for: revocation, outcome: .failed, error: "disk full"), signedBy: phone.key)
            try await bed.publishRaw(.deviceAcks, key: nil, value: Data("garbage".utf8))
            try await bed.publish(emma.violation(by: phone), signedBy: phone.key)
            try await bed.publish(
                GovernanceNotice(
                    userID: adultC, change: .retireDevice, state: .applied, subjectDeviceID: phone.id, actorDeviceID: laptop.id,
                    decidedBy: .device, occurredAt: Timestamp.truncated(Date())))
            // The laptop misses the deadline; then both succeed.
            try await bed.eventually("overdue") { try await bed.deviceStates(revocation.eventID)[laptop.id] == "overdue" }
            try await bed.publish(TestFamily.ack(phone, for: revocation), signedBy: phone.key)
            try await bed.publish(TestFamily.ack(laptop, for: revocation), signedBy: laptop.key)
            try await bed.eventually("completed") {
                try await bed.count("SELECT count(*) FROM revocations WHERE completed_at IS NOT NULL") == 1
            }
            let envelopes = try await bed.withConnection { connection in
                try await connection.query("SELECT kind, envelope FROM notification_outbox").map {
                    try $0.decode(String.self, Data.self)
                }
            }
            #expect(Set(envelopes.map(\.0)) == Set(AuditNotification.Kind.allCases.map(\.rawValue)))
            for (_, envelope) in envelopes { try Self.expectConforms(envelope, to: AuditNotification.schema) }
        }
    }
}
