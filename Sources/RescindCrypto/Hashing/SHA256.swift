import CLibCrypto

/// SHA-256 (FIPS 180-4) through OpenSSL.
public enum SHA256 {
    public static let byteCount = 32

    /// The 32-byte digest of `message`.
    ///
    /// Traps only if libcrypto has no SHA-256 at all (a broken installation); there is no
    /// input-dependent failure.
    public static func hash(_ message: [UInt8]) -> [UInt8] {
        message.withUnsafeBytes { hash($0) }
    }

    static func hash(_ message: UnsafeRawBufferPointer) -> [UInt8] {
        do {
            return try OpenSSLAlgorithm.sha256.withHandle { digest in
                try [UInt8](unsafeUninitializedCapacity: byteCount) { output, initializedCount in
                    var length: UInt32 = 0
                    // A non-null pointer even for the empty message.
                    let input = typedBase(message) ?? UnsafePointer(output.baseAddress!)
                    try OpenSSLError.check(
                        EVP_Digest(input, message.count, output.baseAddress, &length, digest, nil),
                        or: .libraryFailure
                    )
                    initializedCount = Int(length)
                }
            }
        } catch {
            fatalError("OpenSSL SHA-256 unavailable: \(error)")
        }
    }
}
