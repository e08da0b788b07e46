import Foundation
import Testing

/// Each C library is called from one folder of its wrapper module only (swift-kafka-client's
/// `RDKafka/`): librdkafka from `RescindKafka/RDKafka/`, libpq from `RescindPostgres/LibPQ/`.
/// Every other file of every module works with the Swift types those folders define.
@Suite struct CLibraryConfinementTests {
    struct Library {
        let name: String
        /// The one folder (relative to `Sources/`) whose files may touch the library.
        let folder: String
        /// Words that only a use of the library contains (its module, functions, constants, types).
        let patterns: [String]
    }

    static let libraries = [
        Library(name: "librdkafka", folder: "RescindKafka/RDKafka/", patterns: [#"\brd_kafka_"#, #"\bRD_KAFKA_"#, #"\bCRdKafka\b"#, #"\brescind_rd_kafka_"#]),
        Library(
            name: "libpq", folder: "RescindPostgres/LibPQ/",
            patterns: [#"\bCLibPQ\b"#, #"\bPQ[a-z][A-Za-z]*\("#, #"\bPG(conn|result|notify|cancel)\b"#, #"\bPGRES_"#, #"\bCONNECTION_(OK|BAD)\b"#]
        ),
    ]

    /// Every Swift source line outside comments, with its path relative to `Sources/`.
    static func codeLines() throws -> [(path: String, line: String)] {
        let sources = ModuleGraphTests.root.appendingPathComponent("Sources")
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)!
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
        return try files.flatMap { file in
            let path = String(file.standardizedFileURL.path.dropFirst(sources.standardizedFileURL.path.count + 1))
            return try String(contentsOf: file, encoding: .utf8).split(separator: "\n").map {
                $0.trimmingCharacters(in: .whitespaces)
            }.filter { !$0.hasPrefix("//") && !$0.hasPrefix("*") && !$0.hasPrefix("/*") }.map { (path, $0) }
        }
    }

    @Test(arguments: libraries.map(\.name))
    func theLibraryIsCalledOnlyFromItsWrapperFolder(name: String) throws {
        let library = try #require(Self.libraries.first { $0.name == name })
        let expressions = try library.patterns.map { try NSRegularExpression(pattern: $0) }
        var inside = 0
        var outside: [String] = []
        for (path, line) in try Self.codeLines() {
            let range = NSRange(line.startIndex..., in: line)
            let hits = expressions.reduce(0) { $0 + $1.numberOfMatches(in: line, range: range) }
            guard hits > 0 else { continue }
            if path.hasPrefix(library.folder) { inside += hits } else { outside.append("\(path): \(line)") }
        }
        #expect(inside > 20, "expected to find \(name)'s calls in \(library.folder)")
        #expect(outside.isEmpty, "\(outside.count) reference(s) to \(name) outside \(library.folder):\n\(outside.joined(separator: "\n"))")
    }
}
