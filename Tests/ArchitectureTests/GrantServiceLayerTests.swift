import Foundation
import Testing

/// The grant service's business rules stay apart from HTTP and SQL: `Rules/` names no HTTP
/// status, no `APIError` and no SQL; `RevocationStore` (SQL) names no HTTP status either, and
/// the wrapped-key size is written only as `FMKWrapping.wrappedByteCount`.
@Suite struct GrantServiceLayerTests {
    static func source(_ path: String) throws -> String {
        try String(contentsOf: ModuleGraphTests.root.appendingPathComponent("Sources/GrantService/\(path)"), encoding: .utf8)
    }

    @Test func theRulesKnowNeitherHTTPNorSQL() throws {
        let directory = ModuleGraphTests.root.appendingPathComponent("Sources/GrantService/Rules")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".swift") }
        #expect(files.count >= 3, "\(files)")
        for file in files {
            let text = try Self.source("Rules/\(file)")
            for word in ["import Hummingbird", "APIError", "HTTPResponse", "import RescindPostgres", "SELECT ", "UPDATE ", "INSERT "] {
                #expect(!text.contains(word), "Rules/\(file) mentions \(word)")
            }
        }
    }

    @Test func theRevocationStoreNamesNoHTTPStatus() throws {
        let text = try Self.source("Storage/RevocationStore.swift")
        for word in ["APIError", "HTTPResponse", "import Hummingbird", "import RescindServiceSupport"] {
            #expect(!text.contains(word), "RevocationStore mentions \(word)")
        }
    }

    @Test func theWrappedKeySizeIsWrittenOnce() throws {
        let directory = ModuleGraphTests.root.appendingPathComponent("Sources/GrantService")
        let files = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)!
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            #expect(!text.contains("== 40") && !text.contains("exactly 40"), "\(file.lastPathComponent) writes the 40-byte rule itself")
        }
    }
}
