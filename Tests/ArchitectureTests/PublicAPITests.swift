import Foundation
import Testing

/// No public declaration of a wrapper module shows a C type or an unsafe pointer.
@Suite struct PublicAPITests {
    static let forbidden = [
        "Unsafe", "OpaquePointer", "rd_kafka", "PGconn", "PGresult", "EVP_", "OSSL_", "crypto_", "sodium_",
        "import CSodium", "import CLibCrypto", "import CRdKafka", "import CLibPQ",
    ]

    static func publicLines(module: String) throws -> [(file: String, line: String)] {
        let directory = ModuleGraphTests.root.appendingPathComponent("Sources/\(module)")
        let files = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)!
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
        #expect(!files.isEmpty)
        return try files.flatMap { file in
            try String(contentsOf: file, encoding: .utf8).split(separator: "\n").map {
                $0.trimmingCharacters(in: .whitespaces)
            }.filter {
                $0.hasPrefix("public ") || $0.hasPrefix("@inlinable") || $0.hasPrefix("open ")
                    || $0.hasPrefix("public import")
            }.map { (file.lastPathComponent, $0) }
        }
    }

    @Test(arguments: ["RescindCrypto", "RescindKafka", "RescindPostgres"])
    func publicDeclarationsShowNoCTypes(module: String) throws {
        let lines = try Self.publicLines(module: module)
        #expect(lines.count > 20, "expected to read the public API of \(module)")
        for (file, line) in lines {
            for word in Self.forbidden {
                #expect(!line.contains(word), "\(module)/\(file): \(line)")
            }
        }
    }
}
