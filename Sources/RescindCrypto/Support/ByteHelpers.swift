/// The typed base address OpenSSL's and libsodium's byte APIs take; nil for an empty buffer.
@inline(__always)
func typedBase(_ buffer: UnsafeRawBufferPointer) -> UnsafePointer<UInt8>! {
    buffer.baseAddress?.assumingMemoryBound(to: UInt8.self)
}

/// Two lowercase hex digits, for printing public keys.
func hexByte(_ byte: UInt8) -> String {
    let digits = Array("0123456789abcdef".utf8)
    return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0x0f)]], as: UTF8.self)
}
