import Foundation
import RescindCrypto
import RescindProtocol
import Testing

/// The recovery key's certificate of a device key, and a certified device's approval of an
/// identity rotation: their exact signing inputs, and signatures that hold for that user, that
/// device key and that statement only. Two approvals count as two devices only when their
/// certified keys differ.
struct DeviceCertificateTests {
    // RFC 8032 section 7.1, TEST 1 and TEST 2: the recovery and device key pairs, so the inputs
    // below are reproducible.
    static let recoverySeed = hex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
    static let deviceSeed = hex("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb")
    static let userID = UUID(uuidString: "00000000-0000-4000-8000-000000000001")!
    static let deviceID = UUID(uuidString: "00000000-0000-4000-8000-000000000002")!
    static let issuedAt = Date(timeIntervalSince1970: 1_800_000_000)

    static func key(_ seed: [UInt8]) throws -> Ed25519.PrivateKey {
        var seed = seed
        return try Ed25519.PrivateKey(seed: &seed)
    }

    static func certificate(recovery: Ed25519.PrivateKey, device: Ed25519.PrivateKey, deviceID: UUID = deviceID) throws -> DeviceCertificate {
        try DeviceCertificate(
            userID: userID, deviceID: deviceID, devicePublicKey: Data(device.publicKey.rawRepresentation), issuedAt: issuedAt,
            recoveryKey: recovery)
    }

    @Test func theSigningInputIsTheLabelAndTheCanonicalJSONOfEveryFieldButTheSignature() throws {
        let certificate = try Self.certificate(recovery: try Self.key(Self.recoverySeed), device: try Self.key(Self.deviceSeed))
        #expect(String(decoding: try certificate.signingInput(), as: UTF8.self) == """
            rescind.device_certificate.v1
            {"device_id":"00000000-0000-4000-8000-000000000002",\
            "device_public_key":"PUAXw+hDiVqStwqnTRt+vJyYLM8uxJaMwM1V8Sr0Zgw=",\
            "issued_at":"2027-01-15T08:00:00.000Z",\
            "user_id":"00000000-0000-4000-8000-000000000001"}
            """)
        #expect(DeviceApproval.signingInput(of: Array("x".utf8)) == Array("rescind.device_approval.v1\nx".utf8))
    }

    @Test func aCertificateHoldsForItsRecoveryKeyAndUserOnly() throws {
        let recovery = try Self.key(Self.recoverySeed)
        let recoveryPublicKey = Data(recovery.publicKey.rawRepresentation)
        let certificate = try Self.certificate(recovery: recovery, device: try Self.key(Self.deviceSeed))
        #expect(certificate.isValid(recoveryKey: recoveryPublicKey, userID: Self.userID))

        #expect(!certificate.isValid(recoveryKey: nil, userID: Self.userID))
        #expect(!certificate.isValid(recoveryKey: Data(Ed25519.PrivateKey().publicKey.rawRepresentation), userID: Self.userID))
        #expect(!certificate.isValid(recoveryKey: recoveryPublicKey, userID: UUID()))
        #expect(!certificate.isValid(recoveryKey: recoveryPublicKey.prefix(31), userID: Self.userID))
        for tamper in [
            { (c: inout DeviceCertificate) in c.signature[9] ^= 1 },
            { $0.signature = $0.signature.prefix(63) },
            { $0.devicePublicKey = Data(Ed25519.PrivateKey().publicKey.rawRepresentation) },
            { $0.devicePublicKey = $0.devicePublicKey.prefix(31) },
            { $0.deviceID = UUID() },
            { $0.issuedAt = $0.issuedAt.addingTimeInterval(1) },
        ] {
            var tampered = certificate
            tamper(&tampered)
            #expect(!tampered.isValid(recoveryKey: recoveryPublicKey, userID: Self.userID))
        }
    }

    @Test func twoApprovalsCountOnlyFromTwoCertifiedKeysOverThatStatement() throws {
        let recovery = try Self.key(Self.recoverySeed)
        let recoveryPublicKey = Data(recovery.publicKey.rawRepresentation)
        let phone = try Self.key(Self.deviceSeed), iPad = Ed25519.PrivateKey()
        let rotation = Self.rotation()
        let input = try rotation.statement.signingInput()
        let byPhone = DeviceApproval(approving: input, certificate: try Self.certificate(recovery: recovery, device: phone), deviceKey: phone)
        let byIPad = DeviceApproval(
            approving: input, certificate: try Self.certificate(recovery: recovery, device: iPad, deviceID: UUID()), deviceKey: iPad)
        #expect(byPhone.isValid(for: input, recoveryKey: recoveryPublicKey, userID: Self.userID))

        func coSigned(_ approvals: [DeviceApproval]?) -> Bool {
            var approved = rotation
            approved.deviceApprovals = approvals
            return approved.isCoSigned(by: recoveryPublicKey)
        }
        #expect(coSigned([byPhone, byIPad]))
        #expect(!coSigned(nil) && !coSigned([]) && !coSigned([byPhone]))
        // The thief's one phone, twice; or under a second device id: one key is one device.
        let phoneAgain = DeviceApproval(
            approving: input, certificate: try Self.certificate(recovery: recovery, device: phone, deviceID: UUID()), deviceKey: phone)
        #expect(!coSigned([byPhone, byPhone]) && !coSigned([byPhone, phoneAgain]))
        // A second key certified by another recovery key (the service's, say), or approving another statement.
        let servicesKey = Ed25519.PrivateKey()
        let uncertified = DeviceApproval(
            approving: input, certificate: try Self.certificate(recovery: Ed25519.PrivateKey(), device: servicesKey, deviceID: UUID()),
            deviceKey: servicesKey)
        #expect(!coSigned([byPhone, uncertified]))
        let elsewhere = DeviceApproval(
            approving: Array("rescind-identity-rotation-v1\n{}".utf8),
            certificate: try Self.certificate(recovery: recovery, device: iPad, deviceID: UUID()), deviceKey: iPad)
        #expect(!coSigned([byPhone, elsewhere]))
        // The device key's signature over the bare statement (no approval label) is no approval.
        let unlabelled = DeviceApproval(certificate: byIPad.certificate, signature: Data(iPad.signature(for: input)))
        #expect(!coSigned([byPhone, unlabelled]))
        var truncated = byIPad
        truncated.signature = truncated.signature.prefix(63)
        #expect(!coSigned([byPhone, truncated]))
        // Without the recovery key the history names, nothing is certified.
        var approved = rotation
        approved.deviceApprovals = [byPhone, byIPad]
        #expect(!approved.isCoSigned(by: nil) && !approved.isApprovedAtOnce(under: Data(Ed25519.PrivateKey().publicKey.rawRepresentation)))
        #expect(approved.isApprovedAtOnce(under: recoveryPublicKey))
    }

    static func rotation() -> IdentityRotation {
        let next = Ed25519.PrivateKey()
        return IdentityRotation(
            statement: IdentityRotationStatement(
                userID: userID, generation: 2, previousIdentityPublicKey: Data(Ed25519.PrivateKey().publicKey.rawRepresentation),
                identityPublicKey: Data(next.publicKey.rawRepresentation), agreementPublicKey: Data(repeating: 9, count: 32),
                issuedAt: issuedAt),
            previousKeySignature: Data(repeating: 1, count: 64), newKeySignature: Data(repeating: 2, count: 64))
    }
}

private func hex(_ string: String) -> [UInt8] {
    stride(from: 0, to: string.count, by: 2).map {
        let start = string.index(string.startIndex, offsetBy: $0)
        return UInt8(string[start..<string.index(start, offsetBy: 2)], radix: 16)!
    }
}
