import Foundation
import RescindCrypto
import RescindProtocol
import Testing

@testable import AuditService

/// Receipts signed by a device's receipt key: a locked agent holds no device key, so
/// its receipts (`delivered`, `not_now`) are signed by a receipt key that the device key
/// certified while unlocked. The audit service checks the certificate against the device key
/// the revocation lists, and accepts that key for receipts only.
@Suite struct ReceiptKeyTests {
    /// A device's receipt key with the device key's certificate of it.
    struct ReceiptKey {
        let key = Ed25519.PrivateKey()
        let certificate: SignedMessage<ReceiptKeyCertificate>

        /// Certified by `device`'s own key (what its agent does while unlocked).
        init(of device: TestFamily.Device) throws {
            certificate = try ReceiptKeyCertificate.issue(for: key.publicKey, deviceID: device.id, deviceKey: device.key)
        }

        /// A certificate as given (a forger's).
        init(certificate: (Ed25519.PublicKey) throws -> SignedMessage<ReceiptKeyCertificate>) rethrows {
            self.certificate = try certificate(key.publicKey)
        }

        /// `ack` signed by this receipt key as `device:<uuid>/receipts`, certificate inside.
        func sign(_ ack: DeviceAck) throws -> Data {
            var ack = ack
            ack.receiptCertificate = certificate
            return try SignedMessage(
                schema: DeviceAck.schema, signer: ReceiptKeyCertificate.receiptSigner(ack.deviceID), payload: ack, key: key
            ).encoded()
        }
    }

    static func rejections(_ bed: AuditTestBed) async throws -> [String] {
        try await bed.withConnection { connection in
            try await connection.query("SELECT reason FROM rejected_messages ORDER BY rejection_id").map {
                try $0.decode(String.self, column: 0)
            }
        }
    }

    @Test("a certified receipt key moves a device to not_now; the same receipt twice is one receipt")
    func certifiedReceiptsAreAccepted() async throws {
        try await AuditTestBed.with { bed in
            let emma = TestFamily()
            let phone = TestFamily.Device(userID: emma.ownerUserID), laptop = TestFamily.Device(userID: UUID())
            let revocation = emma.revocation(of: laptop.userID, devices: [phone, laptop])
            try await bed.publish(revocation)
            let receipts = try ReceiptKey(of: phone)
            let notNow = CommandLifecycleTests.receipt(phone, for: revocation, .notNow, at: Date())
            for _ in 0..<2 { try await bed.publishRaw(.deviceAcks, key: phone.id, value: try receipts.sign(notNow)) }
            try await bed.publish(CommandLifecycleTests.receipt(laptop, for: revocation, .delivered, at: Date()), signedBy: laptop.key)
            try await bed.eventually("receipts") {
                try await bed.deviceStates(revocation.eventID) == [phone.id: "not_now", laptop.id: "delivered"]
            }
            // The device key still answers.
            try await bed.publish(TestFamily.ack(phone, for: revocation), signedBy: phone.key)
            // A receipt reaching a failed device is history only: the failure stays shown and re-issued.
            try await bed.publish(TestFamily.ack(laptop, for: revocation, outcome: .failed, error: "disk full"), signedBy: laptop.key)
            try await bed.eventually("answers") {
                try await bed.deviceStates(revocation.eventID) == [phone.id: "applied", laptop.id: "failed"]
            }
            let late = CommandLifecycleTests.receipt(laptop, for: revocation, .notNow, at: Date().addingTimeInterval(60))
            try await bed.publishRaw(.deviceAcks, key: laptop.id, value: try ReceiptKey(of: laptop).sign(late))
            try await bed.eventually("stored") { try await bed.count("SELECT count(*) FROM device_acks") == 5 }
            #expect(try await bed.deviceStates(revocation.eventID) == [phone.id: "applied", laptop.id: "failed"])
            #expect(try await bed.count("SELECT count(*) FROM device_acks WHERE outcome = 'not_now'") == 2)
            #expect(try await Self.rejections(bed).isEmpty)
        }
    }

    @Test("a thief with the receipt key: answers, forged certificates and another device's certificate are refused")
    func theReceiptKeyCannotAnswer() async throws {
        // The adversary copied a locked device's data directory: it holds the receipt key and its
        // genuine certificate, not the device key (sealed in the keystore). It also made keys and
        // certificates of its own, and holds another device's genuine certificate.
        try await AuditTestBed.with { bed in
            let emma = TestFamily()
            let phone = TestFamily.Device(userID: emma.ownerUserID), tablet = TestFamily.Device(userID: emma.ownerUserID)
            let revocation = emma.revocation(of: UUID(), devices: [phone, tablet])
            try await bed.publish(revocation)
            let stolen = try ReceiptKey(of: phone)
            try await bed.publishRaw(
                .deviceAcks, key: phone.id,
                value: try stolen.sign(CommandLifecycleTests.receipt(phone, for: revocation, .notNow, at: Date())))
            try await bed.eventually("not_now") { try await bed.deviceStates(revocation.eventID)[phone.id] == "not_now" }

            // Answers signed with the stolen receipt key: applied, healed, already_applied, failed.
            var hostile: [(Data, String)] = []
            for outcome in [DeviceAck.Outcome.applied, .healed, .alreadyApplied, .failed] {
                var ack = TestFamily.ack(phone, for: revocation, outcome: outcome)
                if outcome == .failed { ack.error = "disk full" }
                hostile.append((try stolen.sign(ack), "receipt_key_for_answer"))
            }
            // A receipt key certified by a key that is not the device's.
            let forged = try ReceiptKey { try ReceiptKeyCertificate.issue(for: $0, deviceID: phone.id, deviceKey: Ed25519.PrivateKey()) }
            hostile.append((
                try forged.sign(CommandLifecycleTests.receipt(phone, for: revocation, .delivered, at: Date())),
                "receipt_certificate_bad_signature"
            ))
            // The tablet's genuine certificate on a receipt of the phone.
            let tablets = try ReceiptKey(of: tablet)
            hostile.append((
                try tablets.sign(CommandLifecycleTests.receipt(phone, for: revocation, .delivered, at: Date())),
                "receipt_certificate_other_device"
            ))
            // The stolen key's receipt under the device key's signer name.
            var mislabelled = CommandLifecycleTests.receipt(phone, for: revocation, .delivered, at: Date())
            mislabelled.receiptCertificate = stolen.certificate
            hostile.append((
                try SignedMessage(
                    schema: DeviceAck.schema, signer: ReceiptKeyCertificate.deviceSigner(phone.id), payload: mislabelled,
                    key: stolen.key
                ).encoded(),
                "unknown_signer"
            ))
            // An answer signed with the receipt key, without its certificate (claimed as the device's).
            hostile.append((
                try SignedMessage(
                    schema: DeviceAck.schema, signer: ReceiptKeyCertificate.deviceSigner(phone.id),
                    payload: TestFamily.ack(phone, for: revocation), key: stolen.key
                ).encoded(),
                "bad_signature"
            ))
            for (value, _) in hostile { try await bed.publishRaw(.deviceAcks, key: phone.id, value: value) }
            try await bed.eventually("every hostile ack refused") { try await Self.rejections(bed).count == hostile.count }
            #expect(try await Self.rejections(bed) == hostile.map(\.1))
            // Nothing moved: the phone still waits for its answer, the revocation stays open.
            #expect(try await bed.deviceStates(revocation.eventID) == [phone.id: "not_now", tablet.id: "pending"])
            #expect(try await bed.count("SELECT count(*) FROM device_acks") == 1)
            #expect(try await bed.count("SELECT count(*) FROM revocations WHERE completed_at IS NOT NULL") == 0)
            let announced = try await bed.notifications(count: hostile.count).compactMap { $0.rejection?.reason }
            #expect(announced.sorted() == hostile.map(\.1).sorted())
        }
    }
}
