extension RecordVersion {
    public enum Kind: String, Codable, Sendable {
        /// The record was deleted.
        case deleted
        /// A newer ciphertext replaced this one (a write, or a restore of another version).
        case overwritten
    }

    /// The version as the record it was, for `RecordCipher` (its change sequence is not kept).
    public var asRecord: RecordResponse {
        RecordResponse(
            recordID: recordID, familyMemberID: familyMemberID, fmkVersion: fmkVersion, nonce: nonce,
            ciphertext: ciphertext, tag: tag, changeSeq: 0)
    }
}
