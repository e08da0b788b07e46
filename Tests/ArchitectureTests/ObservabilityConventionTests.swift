import Foundation
import Testing

/// One metrics convention and one set of log metadata keys:
/// - each component declares its metrics in one `<Component>Metrics` type (`GrantMetrics`,
///   `AuditMetrics`, `AgentMetrics`, `ServiceMetrics` for what both services export alike, and
///   `TracingMetrics` for the span exporter of every process), the only files that make metric handles;
/// - every log metadata key is a constant of `LogKey` (module `RescindObservability`), the only
///   `LogKey`, so that one fact has one name in every component's logs.
@Suite struct ObservabilityConventionTests {
    /// The modules that log in production (the dev kit and executables built on the test kit aside).
    static let productModules = [
        "RescindKafka", "RescindPostgres", "RescindLifecycle", "RescindServiceSupport", "GrantService", "AuditService", "DeviceAgent",
        "GrantServiceMain", "AuditServiceMain", "DeviceAgentMain",
    ]

    static func sources(under module: String? = nil) -> [(path: String, text: String)] {
        let sources = ModuleGraphTests.root.appendingPathComponent("Sources")
        let directory = module.map { sources.appendingPathComponent($0) } ?? sources
        let files = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)!
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
        return files.compactMap { file in
            guard let text = try? String(contentsOf: file, encoding: .utf8) else { return nil }
            return (String(file.standardizedFileURL.path.dropFirst(sources.standardizedFileURL.path.count + 1)), text)
        }
    }

    @Test func metricHandlesAreMadeOnlyInTheComponentsMetricsTypes() throws {
        let making = try NSRegularExpression(
            pattern: #"\b(Counter|FloatingPointCounter|Gauge|Timer|Recorder|Meter)\(label:|\.make(Counter|Gauge|DurationHistogram|ValueHistogram|Summary)\("#)
        var definitions: Set<String> = []
        var elsewhere: [String] = []
        for (path, text) in Self.sources() {
            for line in text.split(separator: "\n") where !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") {
                let line = String(line)
                guard making.firstMatch(in: line, range: NSRange(line.startIndex..., in: line)) != nil else { continue }
                if path.hasSuffix("Metrics.swift") { definitions.insert(path) } else { elsewhere.append("\(path): \(line)") }
            }
        }
        #expect(
            definitions == ["GrantService/Application/GrantMetrics.swift", "AuditService/Application/AuditMetrics.swift",
                "DeviceAgent/Support/AgentMetrics.swift", "RescindServiceSupport/ServiceMetrics.swift", "RescindTracing/TracingMetrics.swift"],
            "\(definitions)")
        #expect(elsewhere.isEmpty, "metric handles made outside the metrics types:\n\(elsewhere.joined(separator: "\n"))")
    }

    @Test func thereIsOneLogKeyEnum() {
        let declarations = Self.sources().filter { $0.text.contains("enum LogKey") }.map(\.path)
        #expect(declarations == ["RescindObservability/LogKey.swift"], "\(declarations)")
    }

    /// Metadata dictionaries (`metadata: [...]`, `Logger.Metadata = [...]`) and `logger[metadataKey:]`
    /// use `LogKey` constants, never string literals.
    @Test(arguments: productModules)
    func logMetadataKeysComeFromLogKey(module: String) throws {
        let literalKey = try NSRegularExpression(pattern: #"(\[|,)\s*"[^"\\]*"\s*:"#)
        var offenders: [String] = []
        var dictionaries = 0
        for (path, text) in Self.sources(under: module) {
            if text.contains("metadataKey: \"") { offenders.append("\(path): metadataKey with a literal") }
            for opening in ["metadata: [", "Logger.Metadata = ["] {
                var searchStart = text.startIndex
                while let found = text.range(of: opening, range: searchStart..<text.endIndex) {
                    let literal = String(Self.bracketed(text, from: text.index(before: found.upperBound)))
                    dictionaries += 1
                    if literalKey.firstMatch(in: literal, range: NSRange(literal.startIndex..., in: literal)) != nil {
                        offenders.append("\(path): \(literal.prefix(120))")
                    }
                    searchStart = found.upperBound
                }
            }
        }
        // The executables' mains log little or nothing themselves; every library module logs.
        if !module.hasSuffix("Main") { #expect(dictionaries > 0, "expected log metadata in \(module)") }
        #expect(offenders.isEmpty, "log metadata keys written as literals:\n\(offenders.joined(separator: "\n"))")
    }

    /// The text from the `[` at `start` to its matching `]`.
    static func bracketed(_ text: String, from start: String.Index) -> Substring {
        var depth = 0
        var index = start
        while index < text.endIndex {
            switch text[index] {
            case "[": depth += 1
            case "]":
                depth -= 1
                if depth == 0 { return text[start...index] }
            default: break
            }
            index = text.index(after: index)
        }
        return text[start...]
    }
}
