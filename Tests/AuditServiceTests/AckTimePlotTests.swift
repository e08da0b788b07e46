import Foundation
import Testing

@testable import AuditService

/// The plot of commit-to-last-ack times is SVG drawn by the service: one dot per revocation,
/// labelled axes, p50 and p99 marked, nothing but numbers and times in its text. (The browser
/// test parses and shows it: `MonitoringPageTests`.)
@Suite struct AckTimePlotTests {
    static func count(_ needle: String, in text: String) -> Int { text.components(separatedBy: needle).count - 1 }

    /// The values of `attribute` on every `<circle>`.
    static func circles(_ svg: String, _ attribute: String) -> [Double] {
        svg.components(separatedBy: "<circle ").dropFirst().compactMap { part in
            guard let range = part.range(of: "\(attribute)=\"") else { return nil }
            return Double(part[range.upperBound...].prefix { $0 != "\"" })
        }
    }

    @Test func dotsAxesAndPercentiles() throws {
        let start = Date(timeIntervalSince1970: 1_790_000_000)
        let points = (0..<20).map {
            AckTimePlot.Point(committedAt: start.addingTimeInterval(Double($0) * 60), milliseconds: Int64(100 + $0 * 10))
        }
        let svg = AckTimePlot.svg(points, p50: 190, p99: 290)
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\"") && svg.hasSuffix("</svg>\n"))
        #expect(svg.contains("data-points=\"20\""))
        #expect(Self.count("<circle ", in: svg) == 20)
        #expect(svg.contains(">commit → last ack (ms)</text>") && svg.contains(">committed at (UTC)</text>"))
        #expect(svg.contains(">p50 190 ms</text>") && svg.contains(">p99 290 ms</text>"))
        #expect(svg.contains(">2026-09-21 ") && Self.count("class=\"tick\"", in: svg) == 4)
        #expect(!svg.contains("<script") && !svg.contains("href") && !svg.contains("url("))
        // The slowest dot is highest (smallest y), the earliest leftmost.
        let ys = Self.circles(svg, "cy"), xs = Self.circles(svg, "cx")
        #expect(ys.count == 20 && ys.first! > ys.last! && xs.first! < xs.last!)
    }

    @Test func noneCompletedAndOnePoint() throws {
        let empty = AckTimePlot.svg([], p50: nil, p99: nil)
        #expect(Self.count("<circle ", in: empty) == 0 && empty.contains(">no completed revocation yet</text>"))
        let one = AckTimePlot.svg([.init(committedAt: Date(), milliseconds: 0)], p50: 0, p99: 0)
        #expect(Self.count("<circle ", in: one) == 1 && Self.count("class=\"tick\"", in: one) == 3)
        #expect(AckTimePlot.escape(#"<a href="x">&'"#) == "&lt;a href=&quot;x&quot;&gt;&amp;&#39;")
    }
}
