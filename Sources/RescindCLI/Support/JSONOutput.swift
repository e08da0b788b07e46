import ArgumentParser
import Foundation
import RescindProtocol

/// `--json` for the commands that list or show: one JSON document on standard output, in the
/// field names and encodings of the grant service's API (docs/cli.md), for scripts and `jq`.
struct JSONOption: ParsableArguments {
    @Flag(help: "Print one JSON document instead of text: the API's field names and encodings (UUIDs in capitals, bytes base64, times RFC 3339 UTC).")
    var json = false

    /// Prints `value` as one line of canonical JSON.
    func print<Value: Encodable>(_ value: Value) throws {
        Swift.print(String(decoding: try CanonicalJSON.encode(value), as: UTF8.self))
    }
}
