import Hummingbird
import RescindServiceSupport
import Testing

@testable import GrantService

/// `PageQuery`: the cursor and limit of the change feed (`since=`) and of a device's commands
/// (`after=`), read one way for both.
@Suite struct PageQueryTests {
    /// The parameters of a query string, as Hummingbird hands them over (nothing here is percent-encoded).
    static func page(_ query: String, cursor: String = "since") throws -> PageQuery {
        let pairs = query.split(separator: "&").map { pair -> (key: Substring, value: Substring) in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (parts[0], parts.count > 1 ? parts[1] : "")
        }
        return try PageQuery(Parameters(pairs), cursor: cursor, defaultLimit: 200, maximumLimit: 1000)
    }

    @Test func absentParametersTakeTheDefaults() throws {
        #expect(try Self.page("") == PageQuery(Parameters(), cursor: "since", defaultLimit: 200, maximumLimit: 1000))
        let page = try Self.page("other=1")
        #expect(page.cursor == 0 && page.limit == 200)
    }

    @Test func valuesInRangeAreTaken() throws {
        let page = try Self.page("since=9223372036854775807&limit=1000")
        #expect(page.cursor == Int64.max && page.limit == 1000)
        let after = try Self.page("after=42&limit=1", cursor: "after")
        #expect(after.cursor == 42 && after.limit == 1)
    }

    /// Each refusal is a 400 naming the parameter, as the routes answered before they shared this.
    @Test(arguments: [
        ("since=-1", "since must be a non-negative integer"), ("since=abc", "since must be a non-negative integer"),
        ("since=99999999999999999999", "since must be a non-negative integer"), ("since=", "since must be a non-negative integer"),
        ("limit=0", "limit must be between 1 and 1000"), ("limit=1001", "limit must be between 1 and 1000"),
        ("limit=ten", "limit must be between 1 and 1000"), ("limit=1.5", "limit must be between 1 and 1000"),
    ])
    func outOfRangeOrMalformedIsA400NamingTheParameter(query: String, message: String) throws {
        let error = #expect(throws: APIError.self) { _ = try Self.page(query) }
        #expect(error?.status == .badRequest && error?.code == "bad_request", "\(String(describing: error))")
        #expect(error?.message == message, "\(String(describing: error))")
    }

    @Test func theCursorIsNamedByTheRoute() throws {
        let error = #expect(throws: APIError.self) { _ = try Self.page("after=-1", cursor: "after") }
        #expect(error?.message == "after must be a non-negative integer")
        // The other route's cursor name is just another parameter here.
        #expect(try Self.page("since=-1", cursor: "after").cursor == 0)
    }
}
