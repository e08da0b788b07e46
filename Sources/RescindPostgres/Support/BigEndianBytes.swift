/// Network-order integer helpers for PostgreSQL's binary formats.
extension Array where Element == UInt8 {
    mutating func appendBigEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.bigEndian) { append(contentsOf: $0) }
    }

    /// Overwrites `MemoryLayout<T>.size` bytes at `offset` (used to patch length prefixes).
    mutating func setBigEndian<T: FixedWidthInteger>(_ value: T, at offset: Int) {
        Swift.withUnsafeBytes(of: value.bigEndian) { source in
            for (index, byte) in source.enumerated() { self[offset + index] = byte }
        }
    }

    /// Reads a whole value that must be exactly `MemoryLayout<T>.size` bytes long.
    func bigEndianInteger<T: FixedWidthInteger>(_: T.Type = T.self) -> T? {
        guard count == MemoryLayout<T>.size else { return nil }
        return reduce(T.zero) { ($0 << 8) | T(truncatingIfNeeded: $1) }
    }
}
