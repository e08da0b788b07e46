import Foundation
import Testing

/// `docs/configuration.md` is the reference of every `RESCIND_*` environment variable, checked
/// against the code in both directions: every name the sources or the scripts read is
/// documented, and every name documented is read somewhere.
///
/// What counts as read: in `Sources/` (and, for the test suite's own settings, `Tests/`), a
/// string literal that is exactly a name (`"RESCIND_DATABASE_URL"`); in `scripts/`, any
/// mention (`${RESCIND_STACK_DIR:-…}`). Names the code builds from a prefix
/// (`"RESCIND_KAFKA_TOPIC_\(name)"` followed by `"\(variable)_PARTITIONS"`) are documented as
/// patterns with a capitalised placeholder: `RESCIND_KAFKA_TOPIC_<NAME>_PARTITIONS`.
@Suite struct ConfigurationReferenceTests {
    static let root = ModuleGraphTests.root
    static let reference = root.appendingPathComponent("docs/configuration.md")

    /// The product reads `RESCIND_*` through `EnvironmentReader` only (which trims, types, names
    /// the variable in its errors and lists what it read): no raw `environment["RESCIND_…"]` read
    /// outside RescindConfiguration. Setting one for a child process is not a read.
    @Test func theProductReadsItsSettingsThroughTheOneReader() throws {
        let sources = Self.root.appendingPathComponent("Sources")
        var raw: [String] = []
        var read = 0
        for case let file as URL in FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)!
        where file.pathExtension == "swift" {
            let relative = String(file.path.dropFirst(Self.root.path.count + 1))
            guard !relative.hasPrefix("Sources/DevKit/"), !relative.hasPrefix("Sources/RescindConfiguration/") else { continue }
            read += 1
            for line in try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
            where line.contains("environment[\"RESCIND_") && !line.contains("\"] = ") {
                raw.append("\(relative): \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
        #expect(read > 200, "only \(read) files read")
        #expect(raw.isEmpty, "raw reads: \(raw)")
    }

    /// A name, or the start of a literal the code completes by interpolation (`…\(`).
    static var literal: Regex<AnyRegexOutput> { try! Regex(#""(RESCIND_[A-Z0-9_]*)(\\\(|")"#) }
    static var mention: Regex<AnyRegexOutput> { try! Regex(#"RESCIND_[A-Z0-9_]+"#) }
    /// A documented name or pattern (`RESCIND_KAFKA_TOPIC_<NAME>_RETENTION_MS`).
    static var documentedName: Regex<AnyRegexOutput> { try! Regex(#"RESCIND_[A-Z0-9_]*(<[A-Z]+>[A-Z0-9_]*)?"#) }

    static func files(under folder: String, swiftOnly: Bool) -> [URL] {
        let directory = root.appendingPathComponent(folder)
        guard let enumerator = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: [.isRegularFileKey]) else {
            return []
        }
        return enumerator.compactMap { $0 as? URL }.filter { file in
            (try? file.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true
                && (!swiftOnly || file.pathExtension == "swift")
        }
    }

    struct Literals {
        /// Whole names: `"RESCIND_X"`.
        var names: Set<String> = []
        /// Literals a name is built from: `"RESCIND_KAFKA_TOPIC_\(name)…"`.
        var built: Set<String> = []
        /// Literals that are a name's beginning, matched with `hasPrefix` (`"RESCIND_KAFKA_TOPIC_"`).
        var prefixes: Set<String> = []
        /// The fixed tails of built names: `"\(variable)_PARTITIONS"` gives `_PARTITIONS`.
        var text = ""
    }

    /// The `RESCIND_` string literals of the Swift files under a folder, comments left out.
    static func literals(under folder: String) throws -> Literals {
        var literals = Literals()
        for file in files(under: folder, swiftOnly: true) {
            let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n").filter { line in
                let code = line.trimmingCharacters(in: .whitespaces)
                return !code.hasPrefix("//") && !code.hasPrefix("*") && !code.hasPrefix("/*")
            }
            let text = lines.joined(separator: "\n")
            literals.text += text + "\n"
            for match in text.matches(of: literal) {
                let name = String(match.output[1].substring!)
                if match.output[2].substring == "\\(" {
                    literals.built.insert(name)
                } else if name.hasSuffix("_") {
                    literals.prefixes.insert(name)
                } else {
                    literals.names.insert(name)
                }
            }
        }
        return literals
    }

    /// Every `RESCIND_` name the scripts mention (shell and Python: set, read or explained).
    static func scriptNames() throws -> Set<String> {
        var names: Set<String> = []
        for file in files(under: "scripts", swiftOnly: false) {
            guard let text = try? String(contentsOf: file, encoding: .utf8) else { continue }
            for match in text.matches(of: mention) where !text[match.range].hasSuffix("_") {
                names.insert(String(text[match.range]))
            }
        }
        return names
    }

    struct Documented {
        var names: Set<String> = []
        /// Patterns with a placeholder, as written (`RESCIND_KAFKA_TOPIC_<NAME>_PARTITIONS`).
        var patterns: Set<String> = []

        func covers(_ name: String) -> Bool {
            names.contains(name) || patterns.contains { pattern in
                let expression = pattern.replacing(try! Regex(#"<[A-Z]+>"#), with: "[A-Z0-9_]+")
                return (try? name.wholeMatch(of: Regex(expression))) != nil
            }
        }
    }

    static func documented() throws -> Documented {
        let text = try String(contentsOf: reference, encoding: .utf8)
        var documented = Documented()
        for match in text.matches(of: documentedName) {
            let name = String(text[match.range])
            // `RESCIND_*`, `RESCIND_KAFKA_SSL_*`: a family named in prose, not a variable.
            if name.hasSuffix("_") { continue }
            if name.contains("<") { documented.patterns.insert(name) } else { documented.names.insert(name) }
        }
        return documented
    }

    @Test func everyVariableTheSourcesReadIsDocumented() throws {
        let sources = try Self.literals(under: "Sources")
        let documented = try Self.documented()
        #expect(sources.names.count > 100, "only \(sources.names.count) names found in Sources/")
        let missing = sources.names.filter { !documented.covers($0) }.sorted()
        #expect(missing.isEmpty, "read in Sources/ but not in docs/configuration.md: \(missing)")
        // A name built from a literal is documented as a pattern that starts with it.
        let heads = Set(documented.patterns.map { String($0.prefix { $0 != "<" }) })
        let undocumentedBuilt = sources.built.subtracting(heads).sorted()
        #expect(undocumentedBuilt.isEmpty, "names built from these prefixes have no <NAME> pattern: \(undocumentedBuilt)")
        // A literal matched as a prefix must begin something documented.
        let all = documented.names.union(documented.patterns)
        let strayPrefixes = sources.prefixes.filter { prefix in !all.contains { $0.hasPrefix(prefix) } }.sorted()
        #expect(strayPrefixes.isEmpty, "prefixes matched in Sources/ that begin no documented name: \(strayPrefixes)")
    }

    @Test func everyVariableTheScriptsReadIsDocumented() throws {
        let names = try Self.scriptNames()
        let documented = try Self.documented()
        #expect(names.count > 30, "only \(names.count) names found in scripts/")
        let missing = names.filter { !documented.covers($0) }.sorted()
        #expect(missing.isEmpty, "named in scripts/ but not in docs/configuration.md: \(missing)")
    }

    @Test func everyDocumentedVariableIsRead() throws {
        let sources = try Self.literals(under: "Sources")
        let tests = try Self.literals(under: "Tests")
        let read = sources.names.union(tests.names).union(try Self.scriptNames())
        let documented = try Self.documented()
        let unread = documented.names.subtracting(read).sorted()
        #expect(unread.isEmpty, "documented in docs/configuration.md but read nowhere: \(unread)")
        for pattern in documented.patterns.sorted() {
            let head = String(pattern.prefix { $0 != "<" })
            let tail = String(pattern.drop { $0 != ">" }.dropFirst())
            #expect(sources.built.contains(head), "\(pattern): no name is built from \"\(head)\\(…)\" in Sources/")
            #expect(tail.isEmpty || sources.text.contains(")\(tail)\""), "\(pattern): no name in Sources/ ends with \"\(tail)\"")
        }
    }
}
