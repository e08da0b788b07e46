import Testing

@testable import RescindCrypto

/// Bytes from a hex string (whitespace ignored); traps on malformed test data.
func hex(_ text: String) -> [UInt8] {
    let digits = Array(text.filter { !$0.isWhitespace }.utf8)
    precondition(digits.count % 2 == 0, "odd hex length")
    return stride(from: 0, to: digits.count, by: 2).map { index in
        UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16)!
    }
}

/// Lowercase hex of `bytes`, for readable failure messages.
func hexString(_ bytes: [UInt8]) -> String {
    bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
}

/// `bytes` with bit `bit` of byte `index` inverted.
func flippingBit(_ bytes: [UInt8], at index: Int, bit: Int = 0) -> [UInt8] {
    var copy = bytes
    copy[index] ^= 1 << bit
    return copy
}

/// Asserts that `body` throws a `CryptoError` with `code`.
func expectCryptoError<R>(
    _ code: CryptoError.Code,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> R
) {
    let error = #expect(throws: CryptoError.self, sourceLocation: sourceLocation) {
        _ = try body()
    }
    #expect(error?.code == code, sourceLocation: sourceLocation)
}

/// A test key with known bytes.
func secretKey(_ bytes: [UInt8]) throws -> SecretKey {
    var copy = bytes
    return try SecretKey(bytes: &copy)
}

extension SecretKey {
    /// The key bytes, readable in tests only.
    var testBytes: [UInt8] { withUnsafeBytes { Array($0) } }
}
