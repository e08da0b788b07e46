import CLibCrypto

/// Turns OpenSSL's thread-local error queue into `CryptoError`s.
enum OpenSSLError {
    /// Takes the oldest queued OpenSSL error (if any), clears the rest of this thread's queue
    /// so it never leaks into a later, unrelated call, and wraps it with `code`.
    static func drain(as code: CryptoError.Code) -> CryptoError {
        let packed = ERR_get_error()
        ERR_clear_error()
        return CryptoError(code, openSSLErrorCode: packed == 0 ? nil : packed)
    }

    /// Throws `code` (with the queued OpenSSL detail) unless `result` is OpenSSL's success value 1.
    @inline(__always)
    static func check(_ result: Int32, or code: CryptoError.Code) throws {
        if result != 1 {
            throw drain(as: code)
        }
    }
}
