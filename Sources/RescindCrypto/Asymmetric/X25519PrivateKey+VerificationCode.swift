extension X25519.PrivateKey {
    /// The trust-on-first-use verification code for the identity pair (self, `peer`): the first
    /// 3 bytes of SHA-256 of the X25519 shared secret, as uppercase hex pairs joined by `-`
    /// (e.g. `A3-5F-2B`). Both parties compute the same code from their own private key and
    /// the other's public key; comparing it out of band detects a substituted public key.
    /// 24 bits: meant for a human comparing codes, not as a secret.
    /// - Throws: `CryptoError.weakPublicKey` for a degenerate peer key.
    public func verificationCode(with peer: X25519.PublicKey) throws -> String {
        let digest = try sharedSecret(with: peer).withUnsafeBytes { SHA256.hash($0) }
        return digest.prefix(3).map { hexByte($0).uppercased() }.joined(separator: "-")
    }
}
