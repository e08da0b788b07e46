import CLibPQ

/// libpq's own connection-string parser (`PQconninfoParse`).
enum LibPQConnectionInfo {
    /// The options set explicitly in `conninfo` (a URI or `key=value` string).
    static func parse(_ conninfo: String) throws -> [(keyword: String, value: String)] {
        var errorMessage: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(conninfo, &errorMessage) else {
            // The message may quote part of the URL (and so the password): free it unread.
            if let errorMessage { PQfreemem(errorMessage) }
            throw PostgresError(
                code: .invalidConfiguration,
                message: "the connection URL is not a valid libpq connection string (details withheld: they may quote the password)"
            )
        }
        defer { PQconninfoFree(options) }
        var result: [(keyword: String, value: String)] = []
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val {
                result.append((String(cString: keyword), String(cString: value)))
            }
            option += 1
        }
        return result
    }
}
