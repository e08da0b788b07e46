import Foundation

// Every inbound payload's fields against `MessageLimits`; the JSON Schemas in `schemas/`
// state the same limits.

extension RevocationEvent: BoundaryValidated {
    public func validate() throws(MessageError) {
        let check = FieldCheck()
        try check.bytes(ownerAgreementPublicKey, "owner_agreement_public_key", count: 32)
        try check.integer(newFMKVersion, "new_fmk_version", in: 2...MessageLimits.maxInteger)
        try check.integer(recordsReencrypted, "records_reencrypted", in: 0...MessageLimits.maxInteger)
        try check.text(reason, "reason", maxLength: MessageLimits.reasonLength)
        if let clientDurationMs {
            try check.integer(clientDurationMs, "client_duration_ms", in: 0...MessageLimits.maxInteger)
        }
        try check.timestamp(occurredAt, "occurred_at")
        guard expectedDevices.count <= MessageLimits.expectedDevices else { throw .invalidField("expected_devices") }
        for device in expectedDevices {
            try FieldCheck("expected_devices.").bytes(device.signingPublicKey, "signing_public_key", count: 32)
        }
        // A rotation revokes nobody: no device of it erases.
        if revokedUserID == nil, expectedDevices.contains(where: { $0.action == .secureDeletion }) {
            throw .invalidField("expected_devices")
        }
    }
}

extension AccessEvent: BoundaryValidated {
    public func validate() throws(MessageError) {
        let check = FieldCheck()
        try check.bytes(ownerAgreementPublicKey, "owner_agreement_public_key", count: 32)
        try check.integer(fmkVersion, "fmk_version", in: 1...MessageLimits.maxInteger)
        guard details.count <= MessageLimits.detailEntries else { throw .invalidField("details") }
        for (key, value) in details {
            guard MessageLimits.isSafeText(key, maxLength: MessageLimits.detailKeyLength), !key.isEmpty else {
                throw .invalidField("details")
            }
            try check.text(value, "details", maxLength: MessageLimits.detailValueLength)
        }
        try check.timestamp(occurredAt, "occurred_at")
    }
}

extension DeviceCommand: BoundaryValidated {
    public func validate() throws(MessageError) {
        let check = FieldCheck()
        // The grant service sends 2 or more; 1 is a well-formed (stale) command the agent answers
        // already_applied, so it passes the boundary.
        try check.integer(newFMKVersion, "new_fmk_version", in: 1...MessageLimits.maxInteger)
        try check.timestamp(issuedAt, "issued_at")
    }
}

extension DeviceAck: BoundaryValidated {
    public func validate() throws(MessageError) {
        let check = FieldCheck()
        try check.integer(recordsProcessed, "records_processed", in: 0...MessageLimits.maxInteger)
        try check.integer(fmkVersion, "fmk_version", in: 0...MessageLimits.maxInteger)
        try check.integer(durationMs, "duration_ms", in: 0...MessageLimits.maxInteger)
        try check.text(error, "error", maxLength: MessageLimits.errorLength)
        try check.timestamp(ackedAt, "acked_at")
        if let attempt { try check.integer(attempt, "attempt", in: 1...MessageLimits.maxInteger) }
        if let receiptCertificate {
            guard receiptCertificate.schema == ReceiptKeyCertificate.schema else {
                throw .invalidField("receipt_certificate.schema")
            }
            guard MessageLimits.isSafeText(receiptCertificate.signer, maxLength: MessageLimits.signerLength) else {
                throw .invalidField("receipt_certificate.signer")
            }
            try receiptCertificate.payload.validate()
        }
    }
}

extension AuditNotification: BoundaryValidated {
    public func validate() throws(MessageError) {
        let check = FieldCheck()
        if let commitToLastAckMs { try check.integer(commitToLastAckMs, "commit_to_last_ack_ms", in: 0...Int(Int64.max)) }
        guard (devices?.count ?? 0) <= MessageLimits.expectedDevices else { throw .invalidField("devices") }
        try check.timestamp(deadline, "deadline")
        try check.text(error, "error", maxLength: MessageLimits.errorLength)
        if let rejection {
            try FieldCheck("rejection.").text(rejection.reason, "reason", maxLength: MessageLimits.signerLength)
            try FieldCheck("rejection.").text(rejection.signer, "signer", maxLength: MessageLimits.signerLength * 2)
        }
        try violation?.validate()
        try governance?.validate()
        try check.timestamp(occurredAt, "occurred_at")
    }
}

extension GovernanceNotice: BoundaryValidated {
    public func validate() throws(MessageError) {
        let check = FieldCheck()
        try check.timestamp(occurredAt, "occurred_at")
        if let effectiveAt { try check.timestamp(effectiveAt, "effective_at") }
        // The copy for a device says why it hears of it; the audit copy names no device.
        guard (deviceID == nil) == (audience == nil) else { throw .invalidField("audience") }
        switch change {
        case .rotateIdentity, .transferOwnership, .setRecovery:
            guard operationID != nil else { throw .invalidField("operation_id") }
            if change == .transferOwnership, familyMemberID == nil { throw .invalidField("family_member_id") }
        case .enrolDevice, .retireDevice, .restoreDevice:
            guard subjectDeviceID != nil, state == .applied else { throw .invalidField("subject_device_id") }
        }
        if state == .pending, effectiveAt == nil { throw .invalidField("effective_at") }
    }
}
