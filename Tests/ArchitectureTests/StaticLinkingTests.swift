import Foundation
import Testing

/// The release images link the Swift runtime and Foundation statically (`--static-swift-stdlib`),
/// and there `NSDictionary`/`NSArray` equality of bridged Swift collections does not hold: a
/// nested `[Any]` compares unequal to itself. Debug builds, which every other test runs, link
/// dynamically and cannot see it; so no source compares through those classes.
@Suite struct StaticLinkingTests {
    @Test func noCodeComparesThroughBridgedFoundationCollections() throws {
        let pattern = try NSRegularExpression(pattern: #"\bNS(Mutable)?(Dictionary|Array|Set)\b"#)
        let uses = try CLibraryConfinementTests.codeLines().filter { _, line in
            pattern.numberOfMatches(in: line, range: NSRange(line.startIndex..., in: line)) > 0
        }
        #expect(uses.isEmpty, "use CanonicalJSON.sameJSON or Swift collections:\n\(uses.map { "\($0.path): \($0.line)" }.joined(separator: "\n"))")
    }
}
