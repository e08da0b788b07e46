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
        guard (0..<lastSecond).contains(seconds) else { return calendarFormat(seconds: seconds, fraction: fraction) }
        // 1970 … 9999 by arithmetic: every signature, ack and log line formats dates, and the
        // calendar with `String(format:)` was half the cost of encoding a signed message.
        let days = seconds / 86_400
        let time = seconds - days * 86_400
        let (year, month, day) = civil(daysSinceEpoch: days)
        var text = [UInt8](repeating: 0, count: 24)
        text.withUnsafeMutableBufferPointer { out in
            func put(_ value: Int64, at offset: Int, digits: Int) {
                var value = value
                for index in stride(from: offset + digits - 1, through: offset, by: -1) {
                    out[index] = UInt8(truncatingIfNeeded: 48 + value % 10)
                    value /= 10
                }
            }
            put(year, at: 0, digits: 4)
            out[4] = UInt8(ascii: "-")
            put(month, at: 5, digits: 2)
            out[7] = UInt8(ascii: "-")
            put(day, at: 8, digits: 2)
            out[10] = UInt8(ascii: "T")
            put(time / 3600, at: 11, digits: 2)
            out[13] = UInt8(ascii: ":")
            put(time / 60 % 60, at: 14, digits: 2)
            out[16] = UInt8(ascii: ":")
            put(time % 60, at: 17, digits: 2)
            out[19] = UInt8(ascii: ".")
            put(fraction, at: 20, digits: 3)
            out[23] = UInt8(ascii: "Z")
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The first second of the year 10000: the arithmetic paths cover 1970 up to here.
    static let lastSecond: Int64 = 253_402_300_800

    /// Dates before 1970 or after 9999 (never written by Rescind, but readable): Foundation's
    /// Gregorian calendar, which the arithmetic path must match (`TimestampTests`).
    static func calendarFormat(seconds: Int64, fraction: Int64) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents(
            [.year, .month, .day, .hour, .minute, .second], from: Date(timeIntervalSince1970: Double(seconds)))
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
            parts.year!, parts.month!, parts.day!, parts.hour!, parts.minute!, parts.second!, Int(fraction))
    }

    /// Year, month and day of a day count since 1970-01-01 (proleptic Gregorian; Howard
    /// Hinnant's `civil_from_days`), for days ≥ 0.
    static func civil(daysSinceEpoch days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = z / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Days since 1970-01-01 of a date (the inverse of `civil`, Hinnant's `days_from_civil`).
    static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let year = month <= 2 ? year - 1 : year
        let era = year / 400
        let yearOfEra = year - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    public static func parse(_ text: String) -> Date? {
        if let milliseconds = canonicalMilliseconds(text) { return Date(timeIntervalSince1970: Double(milliseconds) / 1000) }
        return foundationParse(text)
    }

    /// RFC 3339 as Foundation reads it: the path for everything not in the canonical form.
    static func foundationParse(_ text: String) -> Date? {
        let strategy = Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt)
        if let date = try? strategy.parse(text) { return truncated(date) }
        if let date = try? Date.ISO8601FormatStyle(timeZone: .gmt).parse(text) { return date }
        return nil
    }

    /// Milliseconds since 1970 of a timestamp exactly in the form `format` writes, with every
    /// field in range; `nil` for anything else, which goes to Foundation's parser as before: this
    /// path accepts a subset of what was accepted, with the same value up to the year 2200
    /// (`TimestampTests`); beyond, Foundation's `Double` seconds lose a millisecond now and then
    /// and this path does not.
    static func canonicalMilliseconds(_ text: String) -> Int64? {
        var text = text
        return text.withUTF8 { bytes -> Int64? in
            guard bytes.count == 24, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
                bytes[10] == UInt8(ascii: "T"), bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
                bytes[19] == UInt8(ascii: "."), bytes[23] == UInt8(ascii: "Z")
            else { return nil }
            func number(_ offset: Int, _ digits: Int) -> Int64? {
                var value: Int64 = 0
                for index in offset..<offset + digits {
                    let digit = bytes[index] &- UInt8(ascii: "0")
                    guard digit < 10 else { return nil }
                    value = value * 10 + Int64(digit)
                }
                return value
            }
            guard let year = number(0, 4), let month = number(5, 2), let day = number(8, 2), let hour = number(11, 2),
                let minute = number(14, 2), let second = number(17, 2), let fraction = number(20, 3),
                year >= 1970, (1...12).contains(month), hour < 24, minute < 60, second < 60,
                day >= 1, day <= daysIn(month: month, year: year)
            else { return nil }
            let seconds = Self.days(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second
            return seconds * 1000 + fraction
        }
    }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// The date as it will read back after a round trip through `format`.
    public static func truncated(_ date: Date) -> Date {
        Date(timeIntervalSince1970: millisecondsSinceEpoch(date) / 1000)
    }

    /// Whole milliseconds, truncating; a value a hair below a whole millisecond
    /// (binary floating point after parsing) counts as that millisecond.
    static func millisecondsSinceEpoch(_ date: Date) -> Double {
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
