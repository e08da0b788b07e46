/// How a grant's FMK copy is wrapped.
public enum KeyWrapping: String, Codable, Sendable, CaseIterable {
    /// Under the grantee's own master key (the owner's copy); only their devices can unwrap it.
    case `self`
    /// X25519 → HKDF → AES key wrap from the granter's key to the grantee's.
    case ecdh
}
