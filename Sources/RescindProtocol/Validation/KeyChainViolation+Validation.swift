import Foundation

extension KeyChainViolation: BoundaryValidated {
    /// The report comes from a client: every field within `MessageLimits` before it is stored,
    /// as `schemas/rescind.key_chain_violation.v1.schema.json` states.
    public func validate() throws(MessageError) {
        let check = FieldCheck()
        if let offeredFMKVersion {
            try check.integer(offeredFMKVersion, "offered_fmk_version", in: 0...MessageLimits.maxInteger)
        }
        if let statementSeq { try check.integer(statementSeq, "statement_seq", in: 0...MessageLimits.maxInteger) }
        try check.integer(verifiedSeq, "verified_seq", in: 0...MessageLimits.maxInteger)
        try check.text(detail, "detail", maxLength: MessageLimits.errorLength)
        try check.timestamp(detectedAt, "detected_at")
    }
}
