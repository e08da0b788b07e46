import Foundation
import RescindDevKit
import Testing

@testable import RescindClient

/// The QR encoder is checked by an independent reader: zbar (`zbarimg`, Debian's
/// zbar-tools, installed by scripts/stack.sh) must read back exactly what was encoded,
/// in every version the encoder uses and with every mask.
@Suite struct QRCodeTests {
    static let zbarimg = ["/usr/bin/zbarimg", "/usr/local/bin/zbarimg"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// What zbar reads from the symbol's image.
    func decode(_ code: QRCode) async throws -> [UInt8] {
        let reader = try #require(Self.zbarimg, "zbarimg is missing: scripts/stack.sh up installs zbar-tools")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("qr-\(UUID().uuidString).pgm")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(code.pgm()).write(to: file)
        let result = try await ChildProcess.run(
            URL(fileURLWithPath: reader), ["--raw", "--quiet", "-Sbinary", file.path], timeout: .seconds(30),
            separateOutput: true)
        #expect(result.status == 0, "zbarimg found no symbol: \(result.stderr)")
        // zbar ends what it read with a newline.
        let read = Array(result.stdout.utf8)
        return read.last == 0x0A ? Array(read.dropLast()) : read
    }

    @Test(arguments: [1, 14, 15, 40, 62, 84, 106, 122, 152, 180, 213])
    func anIndependentReaderReadsBackWhatWasEncoded(length: Int) async throws {
        var generator = SystemRandomNumberGenerator()
        // Printable bytes: what an invitation token is made of, and what zbar passes through as-is.
        let payload = (0..<length).map { _ in UInt8.random(in: 0x21...0x7E, using: &generator) }
        let code = try QRCode.encode(payload)
        #expect(code.size == 17 + 4 * code.version)
        #expect(try await decode(code) == payload)
    }

    @Test func theSmallestVersionThatHoldsTheInputIsChosen() throws {
        #expect(try QRCode.encode(Array(repeating: 0x41, count: 14)).version == 1)
        #expect(try QRCode.encode(Array(repeating: 0x41, count: 15)).version == 2)
        #expect(try QRCode.encode(Array(repeating: 0x41, count: 213)).version == 10)
    }

    @Test func everyMaskReadsBack() async throws {
        // The encoder keeps the best mask; draw each of the eight by hand and read it.
        let payload = Array("rescind:invitation:every-mask".utf8)
        let version = try QRCode.encode(payload).version
        let words = QRCode.codewords(payload, version: version)
        for mask in 0..<8 {
            var builder = QRCode.Builder(version: version)
            builder.drawFunctionPatterns()
            builder.drawCodewords(words)
            builder.applyMask(mask)
            builder.drawFormatBits(mask: mask)
            #expect(try await decode(QRCode(version: version, mask: mask, modules: builder.modules)) == payload, "mask \(mask)")
        }
    }

    @Test func tooLongIsRefusedWithItsLimit() {
        #expect(throws: QRCode.EncodingError.tooLong(count: 214, maximum: 213)) {
            try QRCode.encode(Array(repeating: 0x41, count: 214))
        }
    }

    @Test func theTerminalDrawingIsTheSymbolTwoRowsPerLine() throws {
        let code = try QRCode.encode(Array("https://example.invalid/i/abc".utf8))
        let lines = code.terminalText(border: 2).split(separator: "\n", omittingEmptySubsequences: false)
        let extent = code.size + 4
        #expect(lines.count == (extent + 1) / 2)
        #expect(lines.allSatisfy { $0.count == extent })
        // Read the modules back from the half blocks (ink is a light module).
        for (row, line) in lines.enumerated() {
            for (column, cell) in line.enumerated() {
                let (x, y) = (column - 2, row * 2 - 2)
                func dark(_ y: Int) -> Bool { x >= 0 && y >= 0 && x < code.size && y < code.size && code.modules[y][x] }
                let expected: Character =
                    switch (!dark(y), row * 2 + 1 < extent ? !dark(y + 1) : false) {
                    case (true, true): "█"
                    case (true, false): "▀"
                    case (false, true): "▄"
                    case (false, false): " "
                    }
                #expect(cell == expected, "row \(row) column \(column)")
            }
        }
    }

    /// The Reed–Solomon generator of degree 10 (version 1-M), as tabulated in ISO/IEC 18004
    /// annex A in exponent form: α⁰ x¹⁰ + α²⁵¹ x⁹ + α⁶⁷ x⁸ + α⁴⁶ x⁷ + α⁶¹ x⁶ + α¹¹⁸ x⁵ + α⁷⁰ x⁴ + α⁶⁴ x³ + α⁹⁴ x² + α³² x + α⁴⁵.
    @Test func reedSolomonGeneratorMatchesTheStandard() {
        var power: [UInt8] = [1]
        for _ in 1..<255 { power.append(QRCode.ReedSolomon.multiply(power.last!, 2)) }
        let exponents = [251, 67, 46, 61, 118, 70, 64, 94, 32, 45]
        #expect(QRCode.ReedSolomon.divisor(degree: 10) == exponents.map { power[$0] })
    }
}
