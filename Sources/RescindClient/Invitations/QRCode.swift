/// A QR code (ISO/IEC 18004) of a short byte string, for showing an invitation in a
/// terminal so that the other person's phone or camera can read it.
///
/// Byte mode, error-correction level M (about 15% of the symbol may be damaged),
/// versions 1–10 (up to 213 bytes), the mask chosen by the standard's penalty rules.
/// Pure Swift, no dependency: what it draws is checked by decoding it with an
/// independent reader (zbar) in the tests.
public struct QRCode: Sendable, Equatable {
    /// The symbol's version (1…10): its size is `17 + 4 × version` modules.
    public let version: Int
    /// The mask pattern chosen (0…7).
    public let mask: Int
    /// `modules[y][x]`: `true` is a dark module.
    public let modules: [[Bool]]

    public var size: Int { modules.count }

    public enum EncodingError: Error, Equatable {
        /// Longer than a version-10 symbol at level M holds (213 bytes).
        case tooLong(count: Int, maximum: Int)
    }

    /// The largest input `encode` accepts.
    public static let maximumLength = Block.table[Block.table.count - 1].dataCapacity - 3

    /// Encodes `bytes` in the smallest version that holds them.
    public static func encode(_ bytes: [UInt8]) throws -> QRCode {
        guard
            let version = (1...Block.table.count).first(where: { v in
                bytes.count + (v < 10 ? 2 : 3) <= Block.table[v - 1].dataCapacity
            })
        else { throw EncodingError.tooLong(count: bytes.count, maximum: maximumLength) }
        var builder = Builder(version: version)
        builder.drawFunctionPatterns()
        builder.drawCodewords(Self.codewords(bytes, version: version))
        var best: (penalty: Int, mask: Int, modules: [[Bool]])?
        for mask in 0..<8 {
            var candidate = builder
            candidate.applyMask(mask)
            candidate.drawFormatBits(mask: mask)
            let penalty = candidate.penalty()
            if best == nil || penalty < best!.penalty { best = (penalty, mask, candidate.modules) }
        }
        return QRCode(version: version, mask: best!.mask, modules: best!.modules)
    }

    /// Two modules per character cell (upper and lower half blocks), light modules drawn
    /// as ink so that it reads on the usual dark terminal, with a quiet zone of `border`.
    public func terminalText(border: Int = 2) -> String {
        let extent = size + 2 * border
        func dark(_ x: Int, _ y: Int) -> Bool {
            let (mx, my) = (x - border, y - border)
            return mx >= 0 && my >= 0 && mx < size && my < size && modules[my][mx]
        }
        var lines: [String] = []
        var y = 0
        while y < extent {
            var line = ""
            for x in 0..<extent {
                let top = !dark(x, y)
                let bottom = y + 1 < extent ? !dark(x, y + 1) : false
                switch (top, bottom) {
                case (true, true): line += "█"
                case (true, false): line += "▀"
                case (false, true): line += "▄"
                case (false, false): line += " "
                }
            }
            lines.append(line)
            y += 2
        }
        return lines.joined(separator: "\n")
    }

    /// A plain PGM image (white background, `scale` pixels per module, quiet zone of
    /// `border` modules): what an image reader can open.
    public func pgm(scale: Int = 4, border: Int = 4) -> [UInt8] {
        let extent = (size + 2 * border) * scale
        var pixels = [UInt8](repeating: 255, count: extent * extent)
        for y in 0..<size {
            for x in 0..<size where modules[y][x] {
                for dy in 0..<scale {
                    let row = ((y + border) * scale + dy) * extent
                    for dx in 0..<scale { pixels[row + (x + border) * scale + dx] = 0 }
                }
            }
        }
        return Array("P5\n\(extent) \(extent)\n255\n".utf8) + pixels
    }

    // MARK: Data

    /// Mode, count, bytes, terminator, padding, then Reed–Solomon per block, interleaved.
    static func codewords(_ bytes: [UInt8], version: Int) -> [UInt8] {
        let layout = Block.table[version - 1]
        precondition(bytes.count + (version < 10 ? 2 : 3) <= layout.dataCapacity, "the input does not fit version \(version)")
        var bits = BitBuffer()
        bits.append(0b0100, count: 4)
        bits.append(UInt32(bytes.count), count: version < 10 ? 8 : 16)
        for byte in bytes { bits.append(UInt32(byte), count: 8) }
        let capacityBits = layout.dataCapacity * 8
        bits.append(0, count: min(4, capacityBits - bits.count))
        bits.append(0, count: (8 - bits.count % 8) % 8)
        var data = bits.bytes
        var pad: UInt8 = 0xEC
        while data.count < layout.dataCapacity {
            data.append(pad)
            pad = pad == 0xEC ? 0x11 : 0xEC
        }
        var blocks: [[UInt8]] = []
        var offset = 0
        for length in layout.blockLengths {
            blocks.append(Array(data[offset..<offset + length]))
            offset += length
        }
        let divisor = ReedSolomon.divisor(degree: layout.ecPerBlock)
        let corrections = blocks.map { ReedSolomon.remainder($0, divisor: divisor) }
        var result: [UInt8] = []
        for i in 0..<(layout.blockLengths.max() ?? 0) {
            for block in blocks where i < block.count { result.append(block[i]) }
        }
        for i in 0..<layout.ecPerBlock {
            for correction in corrections { result.append(correction[i]) }
        }
        return result
    }

    /// Level M's block structure of versions 1…10 (ISO/IEC 18004, table 9).
    struct Block {
        let ecPerBlock: Int
        let blockLengths: [Int]
        var dataCapacity: Int { blockLengths.reduce(0, +) }

        static let table: [Block] = [
            Block(ecPerBlock: 10, blockLengths: [16]),
            Block(ecPerBlock: 16, blockLengths: [28]),
            Block(ecPerBlock: 26, blockLengths: [44]),
            Block(ecPerBlock: 18, blockLengths: [32, 32]),
            Block(ecPerBlock: 24, blockLengths: [43, 43]),
            Block(ecPerBlock: 16, blockLengths: [27, 27, 27, 27]),
            Block(ecPerBlock: 18, blockLengths: [31, 31, 31, 31]),
            Block(ecPerBlock: 22, blockLengths: [38, 38, 39, 39]),
            Block(ecPerBlock: 22, blockLengths: [36, 36, 36, 37, 37]),
            Block(ecPerBlock: 26, blockLengths: [43, 43, 43, 43, 44]),
        ]
    }

    struct BitBuffer {
        private(set) var bits: [Bool] = []
        var count: Int { bits.count }

        mutating func append(_ value: UInt32, count: Int) {
            for i in stride(from: count - 1, through: 0, by: -1) { bits.append((value >> UInt32(i)) & 1 == 1) }
        }

        var bytes: [UInt8] {
            stride(from: 0, to: bits.count, by: 8).map { start in
                (0..<8).reduce(UInt8(0)) { byte, i in byte << 1 | (start + i < bits.count && bits[start + i] ? 1 : 0) }
            }
        }
    }

    enum ReedSolomon {
        /// Multiplication in GF(2⁸) modulo x⁸ + x⁴ + x³ + x² + 1.
        static func multiply(_ x: UInt8, _ y: UInt8) -> UInt8 {
            var z: UInt16 = 0
            for i in stride(from: 7, through: 0, by: -1) {
                z = (z << 1) ^ ((z >> 7) * 0x11D)
                z ^= UInt16((y >> UInt8(i)) & 1) * UInt16(x)
            }
            return UInt8(z & 0xFF)
        }

        /// The generator polynomial's coefficients (highest first, the leading 1 left out).
        static func divisor(degree: Int) -> [UInt8] {
            var result = [UInt8](repeating: 0, count: degree)
            result[degree - 1] = 1
            var root: UInt8 = 1
            for _ in 0..<degree {
                for j in 0..<degree {
                    result[j] = multiply(result[j], root)
                    if j + 1 < degree { result[j] ^= result[j + 1] }
                }
                root = multiply(root, 0x02)
            }
            return result
        }

        static func remainder(_ data: [UInt8], divisor: [UInt8]) -> [UInt8] {
            var result = [UInt8](repeating: 0, count: divisor.count)
            for byte in data {
                let factor = byte ^ result.removeFirst()
                result.append(0)
                for i in 0..<result.count { result[i] ^= multiply(divisor[i], factor) }
            }
            return result
        }
    }

    // MARK: Drawing

    struct Builder {
        let version: Int
        let size: Int
        var modules: [[Bool]]
        var isFunction: [[Bool]]

        init(version: Int) {
            self.version = version
            self.size = 17 + 4 * version
            modules = Array(repeating: Array(repeating: false, count: size), count: size)
            isFunction = modules
        }

        mutating func set(_ x: Int, _ y: Int, _ dark: Bool) {
            modules[y][x] = dark
            isFunction[y][x] = true
        }

        mutating func drawFunctionPatterns() {
            for i in 0..<size {
                set(6, i, i % 2 == 0)
                set(i, 6, i % 2 == 0)
            }
            for (cx, cy) in [(3, 3), (size - 4, 3), (3, size - 4)] {
                for dy in -4...4 {
                    for dx in -4...4 where (0..<size).contains(cx + dx) && (0..<size).contains(cy + dy) {
                        let distance = max(abs(dx), abs(dy))
                        set(cx + dx, cy + dy, distance != 2 && distance != 4)
                    }
                }
            }
            let positions = alignmentPositions
            for (i, y) in positions.enumerated() {
                for (j, x) in positions.enumerated() {
                    let last = positions.count - 1
                    if (i == 0 && j == 0) || (i == 0 && j == last) || (i == last && j == 0) { continue }
                    for dy in -2...2 {
                        for dx in -2...2 { set(x + dx, y + dy, max(abs(dx), abs(dy)) != 1) }
                    }
                }
            }
            drawFormatBits(mask: 0)  // reserves the format areas; redrawn once the mask is chosen
            if version >= 7 {
                var remainder = version
                for _ in 0..<12 { remainder = (remainder << 1) ^ ((remainder >> 11) * 0x1F25) }
                let bits = version << 12 | remainder
                for i in 0..<18 {
                    let dark = (bits >> i) & 1 == 1
                    let (a, b) = (size - 11 + i % 3, i / 3)
                    set(a, b, dark)
                    set(b, a, dark)
                }
            }
        }

        var alignmentPositions: [Int] {
            [[], [6, 18], [6, 22], [6, 26], [6, 30], [6, 34], [6, 22, 38], [6, 24, 42], [6, 26, 46], [6, 28, 50]][version - 1]
        }

        /// Level M (format bits 00) and the mask, BCH-protected, in both copies.
        mutating func drawFormatBits(mask: Int) {
            let data = 0b00 << 3 | mask
            var remainder = data
            for _ in 0..<10 { remainder = (remainder << 1) ^ ((remainder >> 9) * 0x537) }
            let bits = (data << 10 | remainder) ^ 0x5412
            func bit(_ i: Int) -> Bool { (bits >> i) & 1 == 1 }
            for i in 0...5 { set(8, i, bit(i)) }
            set(8, 7, bit(6))
            set(8, 8, bit(7))
            set(7, 8, bit(8))
            for i in 9..<15 { set(14 - i, 8, bit(i)) }
            for i in 0..<8 { set(size - 1 - i, 8, bit(i)) }
            for i in 8..<15 { set(8, size - 15 + i, bit(i)) }
            set(8, size - 8, true)
        }

        /// The zigzag from the bottom-right corner, two columns at a time, skipping the
        /// vertical timing pattern; what is left over stays light (the remainder bits).
        mutating func drawCodewords(_ data: [UInt8]) {
            var index = 0
            var right = size - 1
            while right >= 1 {
                if right == 6 { right = 5 }
                for vertical in 0..<size {
                    for j in 0..<2 {
                        let x = right - j
                        let upward = (right + 1) & 2 == 0
                        let y = upward ? size - 1 - vertical : vertical
                        if !isFunction[y][x] && index < data.count * 8 {
                            modules[y][x] = (data[index >> 3] >> UInt8(7 - (index & 7))) & 1 == 1
                            index += 1
                        }
                    }
                }
                right -= 2
            }
        }

        mutating func applyMask(_ mask: Int) {
            for y in 0..<size {
                for x in 0..<size where !isFunction[y][x] {
                    let invert: Bool
                    switch mask {
                    case 0: invert = (x + y) % 2 == 0
                    case 1: invert = y % 2 == 0
                    case 2: invert = x % 3 == 0
                    case 3: invert = (x + y) % 3 == 0
                    case 4: invert = (x / 3 + y / 2) % 2 == 0
                    case 5: invert = x * y % 2 + x * y % 3 == 0
                    case 6: invert = (x * y % 2 + x * y % 3) % 2 == 0
                    default: invert = ((x + y) % 2 + x * y % 3) % 2 == 0
                    }
                    if invert { modules[y][x].toggle() }
                }
            }
        }

        /// The standard's four penalty rules: runs of five or more, 2×2 blocks, finder-like
        /// 1:1:3:1:1 patterns with four light modules beside them, and imbalance.
        func penalty() -> Int {
            var total = 0
            let lines = modules + (0..<size).map { x in (0..<size).map { y in modules[y][x] } }
            for line in lines {
                var run = 1
                for i in 1..<size {
                    if line[i] == line[i - 1] {
                        run += 1
                        if run == 5 { total += 3 } else if run > 5 { total += 1 }
                    } else {
                        run = 1
                    }
                }
                let pattern: [Bool] = [true, false, true, true, true, false, true]
                for start in 0...(size - 7) where Array(line[start..<start + 7]) == pattern {
                    let before = start >= 4 && line[(start - 4)..<start].allSatisfy { !$0 }
                    let after = start + 11 <= size && line[(start + 7)..<(start + 11)].allSatisfy { !$0 }
                    if before || after { total += 40 }
                }
            }
            for y in 0..<(size - 1) {
                for x in 0..<(size - 1) {
                    let c = modules[y][x]
                    if c == modules[y][x + 1] && c == modules[y + 1][x] && c == modules[y + 1][x + 1] { total += 3 }
                }
            }
            let dark = modules.reduce(0) { $0 + $1.filter { $0 }.count }
            let cells = size * size
            let k = (abs(dark * 20 - cells * 10) + cells - 1) / cells - 1
            total += max(0, k) * 10
            return total
        }
    }
}
