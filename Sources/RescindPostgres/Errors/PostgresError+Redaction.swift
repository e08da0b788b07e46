import Foundation

extension PostgresError {
    /// Data exceptions (SQLSTATE class 22) quote the offending input in the primary message,
    /// e.g. `invalid input syntax for type uuid: "…"`; that input can be a parameter value, so
    /// everything after the first `: ` is cut and every double-quoted span is blanked.
    /// Other classes quote only object names (constraint, table, column) and are kept whole.
    static func redactingValues(in message: String, sqlState: String?) -> String {
        guard sqlState?.hasPrefix("22") == true else { return message }
        let head = message.components(separatedBy: ": ").first ?? message
        var redacted = ""
        var insideQuotes = false
        for character in head {
            if character == "\"" {
                if insideQuotes { redacted += "…\"" } else { redacted += "\"" }
                insideQuotes.toggle()
            } else if !insideQuotes {
                redacted.append(character)
            }
        }
        return insideQuotes ? redacted + "…\"" : redacted
    }
}
