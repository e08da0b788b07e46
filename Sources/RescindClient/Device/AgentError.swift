/// The one error type of the device agent.
///
/// `code` is stable (log it, match on it, put it in an ack's `error`); `description` is one
/// line for an operator and never contains key bytes, passphrases, plaintext or ciphertext.
public struct AgentError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// A setting is missing or unusable.
        public static let configuration = Code(rawValue: "configuration")
        /// The data directory or a key file is reachable by other users, or not ours.
        public static let insecurePermissions = Code(rawValue: "insecure_permissions")
        /// The passphrase or key file does not open the keystore.
        public static let wrongPassphrase = Code(rawValue: "wrong_passphrase")
        /// No keystore yet: the device must be enrolled first.
        public static let notEnrolled = Code(rawValue: "not_enrolled")
        /// A keystore already exists where enrolment would create one.
        public static let alreadyEnrolled = Code(rawValue: "already_enrolled")
        /// The keystore or an identity bundle is not in a format this build reads.
        public static let invalidKeystore = Code(rawValue: "invalid_keystore")
        /// The local database failed.
        public static let storage = Code(rawValue: "storage")
        /// The local database was busy, locked, full or failed to read or write: worth retrying.
        public static let storageBusy = Code(rawValue: "storage_busy")
        /// The grant service offered an FMK version below one this device already held.
        public static let versionDowngrade = Code(rawValue: "version_downgrade")
        /// The new FMK does not unwrap, or the records do not decrypt under it.
        public static let verificationFailed = Code(rawValue: "verification_failed")
        /// The grant service answered 403: this user's access was revoked.
        public static let accessRevoked = Code(rawValue: "access_revoked")
        /// The grant service is not at the commanded version yet (retry later).
        public static let serviceBehind = Code(rawValue: "service_behind")
        /// The grant service or the network failed in a way worth retrying.
        public static let unavailable = Code(rawValue: "unavailable")
        /// The grant service refused a request for another reason.
        public static let serviceRefused = Code(rawValue: "service_refused")
        /// The agent runs locked: the work needs its keys (it waits for the unlock).
        public static let locked = Code(rawValue: "locked")
        /// A long download staged in the local database was disturbed before it was swapped in
        /// (another process on the same data directory cleared it); it is done again.
        public static let downloadDisturbed = Code(rawValue: "download_disturbed")
        /// The key history or the wrapped key the grant service served failed verification
        /// (`KeyHistoryError`): the key was refused, what was held is kept, the refusal reported.
        public static let keyHistoryRefused = Code(rawValue: "key_history_refused")
        /// The service answered 403 but no owner-signed statement excludes this user: the copy is
        /// kept (a bare 403 is no reason to erase), reported, and checked again later.
        public static let unsignedErasure = Code(rawValue: "unsigned_erasure")
        /// An identity rotation took effect, but the family members the user owns follow the new
        /// key only later (neither the recovery key their history names nor two devices it
        /// certified approved it): nothing was moved; run it again then.
        public static let rotationNotDue = Code(rawValue: "rotation_not_due")
        /// A fault injected by a test.
        public static let injectedFault = Code(rawValue: "injected_fault")
    }

    public let code: Code
    /// For people: says what to do; never contains secrets.
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// Worth retrying later with the same input (the network, a lagging service).
    package var isTransient: Bool { code == .unavailable || code == .serviceBehind || code == .downloadDisturbed }

    /// The local database failed (busy or for good).
    package var isStorage: Bool { code == .storage || code == .storageBusy }

    public var description: String { message }
}
