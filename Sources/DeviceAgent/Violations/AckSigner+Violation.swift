import Foundation
import RescindProtocol

extension AckSigner {
    /// The signed `device_acks` message reporting a key chain violation (schema
    /// `rescind.key_chain_violation.v1`), made to fit `MessageLimits` rather than fail: the
    /// detail is cut and cleaned, the reporter is this device.
    func violation(_ violation: KeyChainViolation) throws -> Data {
        var report = violation
        report.reporterDeviceID = deviceID
        report.detail = MessageLimits.safeText(report.detail, maxLength: MessageLimits.errorLength)
        return try SignedMessage(schema: KeyChainViolation.schema, signer: signer, payload: report, key: deviceKey).encoded()
    }
}
