import Foundation

/// RFC 3339 timestamps with millisecond precision, always UTC (`2026-01-20T15:00:00.123Z`).
///
/// Millisecond truncation is part of the signed form: a decoded timestamp
/// re-encodes to the same text.
public enum Timestamp {
    public static func format(_ date: Date) -> String {
        let milliseconds = Int64(millisecondsSinceEpoch(date))
        let seconds = milliseconds.floorDiv(1000)
        let fraction = milliseconds - seconds * 1000
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents(
            [.year, .month, .day, .hour, .minute, .second], from: Date(timeIntervalSince1970: Double(seconds)))
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
            parts.year!, parts.month!, parts.day!, parts.hour!, parts.minute!, parts.second!, Int(fraction))
    }

    public static func parse(_ text: String) -> Date? {
        let strategy = Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt)
        if let date = try? strategy.parse(text) { return truncated(date) }
        if let date = try? Date.ISO8601FormatStyle(timeZone: .gmt).parse(text) { return date }
        return nil
    }

    /// The date as it will read back after a round trip through `format`.
    public static func truncated(_ date: Date) -> Date {
        Date(timeIntervalSince1970: millisecondsSinceEpoch(date) / 1000)
    }

    /// Whole milliseconds, truncating; a value a hair below a whole millisecond
    /// (binary floating point after parsing) counts as that millisecond.
    private static func millisecondsSinceEpoch(_ date: Date) -> Double {
        let milliseconds = date.timeIntervalSince1970 * 1000
        let nearest = milliseconds.rounded()
        return abs(milliseconds - nearest) < 0.001 ? nearest : milliseconds.rounded(.down)
    }
}

extension Int64 {
    fileprivate func floorDiv(_ divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor < 0) ? quotient - 1 : quotient
    }
}
