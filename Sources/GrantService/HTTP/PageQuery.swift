import Hummingbird
import RescindServiceSupport

/// A page of a feed as its query asks for it: a cursor (`since=` or `after=`, a non-negative
/// position, 0 when absent) and `limit=` (1 … the route's maximum, its default when absent).
/// Anything else is a 400 naming the parameter.
struct PageQuery: Equatable {
    let cursor: Int64
    let limit: Int

    init(_ query: Parameters, cursor name: String, defaultLimit: Int, maximumLimit: Int) throws {
        cursor = try query.get(name).map { text -> Int64 in
            guard let value = Int64(text), value >= 0 else { throw APIError.badRequest("\(name) must be a non-negative integer") }
            return value
        } ?? 0
        limit = try query.get("limit").map { text -> Int in
            guard let value = Int(text), (1...maximumLimit).contains(value) else {
                throw APIError.badRequest("limit must be between 1 and \(maximumLimit)")
            }
            return value
        } ?? defaultLimit
    }
}
