import Foundation
import RescindCrypto
import RescindPostgres
import RescindProtocol

extension InboundMessageHandler {
    /// A key chain violation an agent signed onto `device_acks`. The audit service knows a
    /// device's key only from revocation events that listed the device: with one, the
    /// signature must verify (else `bad_signature`); without one, the report is stored as
    /// `unverified_device`. A report id already recorded is refused as `duplicate_report`.
    func keyChainViolation(
        _ bytes: Data?, at position: MessagePosition, on connection: PostgresConnection,
        into conclusions: inout Conclusions
    ) async throws {
        guard let bytes else { throw Rejection(MessageError.malformed) }
        let message: SignedMessage<KeyChainViolation>
        do {
            message = try SignedMessage<KeyChainViolation>.decode(bytes, schema: KeyChainViolation.schema)
        } catch let error as MessageError {
            throw Rejection(error)
        }
        let violation = message.payload
        func rejection(_ reason: String) -> Rejection {
            Rejection(
                reason, signer: message.signer, familyMemberID: violation.familyMemberID,
                deviceID: violation.reporterDeviceID)
        }
        guard message.signer == RevocationTracker.signer(of: violation.reporterDeviceID) else {
            throw rejection(MessageError.unknownSigner("").code)
        }
        guard message.signature.count == Ed25519.signatureByteCount else { throw rejection(MessageError.badSignature.code) }
        let known = try await connection.query(
            """
            SELECT DISTINCT signing_public_key, user_id FROM revocation_devices
            WHERE device_id = \(violation.reporterDeviceID)
            """
        ).map { try $0.decode([UInt8].self, UUID.self) }
        let verification: AuditNotification.ReporterVerification
        if known.isEmpty {
            verification = .unverifiedDevice
        } else {
            let signedBy = known.first { key, _ in
                guard let key = try? Ed25519.PublicKey(rawRepresentation: key) else { return false }
                return (try? message.verify(key: key)) != nil
            }
            guard let signedBy else { throw rejection(MessageError.badSignature.code) }
            guard signedBy.1 == violation.reporterUserID else { throw rejection("mismatched_report") }
            verification = .deviceSignature
        }
        guard try await violationIntake.record(violation, verification: verification, on: connection, into: &conclusions)
        else { throw rejection(KeyChainViolationIntake.duplicate) }
    }
}
