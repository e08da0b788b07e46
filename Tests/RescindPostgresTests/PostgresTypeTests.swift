import Foundation
import RescindPostgres
import Testing

@Suite("Binary types round trip through a real server")
struct PostgresTypeTests {
    struct Profile: Codable, Equatable {
        let name: String
        let tags: [String]
        let age: Int
    }

    @Test func everyTypeRoundTripsIncludingNulls() async throws {
        try await TestDatabase.withConnection { connection, _ in
            try await connection.execute("""
                CREATE TABLE everything (
                    n int, id uuid, small int2, medium int4, big int8, word text, blob bytea,
                    at timestamptz, doc jsonb, flag bool, ratio float8
                )
                """)
            let id = UUID()
            let at = Date(timeIntervalSince1970: 1_700_000_000.123456)
            let blob: [UInt8] = [0, 1, 2, 254, 255]
            let doc = try PostgresJSON(encoding: Profile(name: "Zoë", tags: ["a", "b"], age: 7))
            try await connection.execute("""
                INSERT INTO everything VALUES
                    (1, \(id), \(Int16(-3)), \(Int32.min), \(Int64.max), \("héllo"), \(blob), \(at), \(doc), \(true), \(0.25)),
                    (2, \(nil as UUID?), \(nil as Int16?), \(nil as Int32?), \(nil as Int?), \(nil as String?),
                     \(nil as Data?), \(nil as Date?), \(nil as PostgresJSON?), \(nil as Bool?), \(nil as Double?))
                """)
            let rows = try await connection.query("SELECT id, small, medium, big, word, blob, at, doc, flag, ratio FROM everything ORDER BY n")
            try #require(rows.count == 2)

            let full = rows[0]
            #expect(try full.decode(UUID.self, column: 0) == id)
            #expect(try full.decode(Int16.self, column: 1) == -3)
            #expect(try full.decode(Int32.self, column: "small") == -3)
            #expect(try full.decode(Int32.self, column: "medium") == Int32.min)
            #expect(try full.decode(Int64.self, column: "big") == Int64.max)
            #expect(try full.decode(String.self, column: "word") == "héllo")
            #expect(try full.decode([UInt8].self, column: "blob") == blob)
            #expect(try full.decode(Data.self, column: "blob") == Data(blob))
            let decodedAt = try full.decode(Date.self, column: "at")
            #expect(abs(decodedAt.timeIntervalSince(at)) < 0.000_001)
            #expect(try full.decode(PostgresJSON.self, column: "doc").decode(Profile.self) == Profile(name: "Zoë", tags: ["a", "b"], age: 7))
            #expect(try full.decode(Bool.self, column: "flag") == true)
            #expect(try full.decode(Double.self, column: "ratio") == 0.25)

            let empty = rows[1]
            let tuple = try empty.decode(
                UUID?.self, Int16?.self, Int32?.self, Int?.self, String?.self, [UInt8]?.self, Date?.self,
                PostgresJSON?.self, Bool?.self, Double?.self)
            #expect(tuple.0 == nil && tuple.1 == nil && tuple.2 == nil && tuple.3 == nil && tuple.4 == nil)
            #expect(tuple.5 == nil && tuple.6 == nil && tuple.7 == nil && tuple.8 == nil && tuple.9 == nil)
        }
    }

    @Test func arraysBindAsOneParameter() async throws {
        try await TestDatabase.withConnection { connection, _ in
            try await connection.execute("CREATE TABLE items (id uuid PRIMARY KEY, name text, size int8)")
            let ids = (0..<300).map { _ in UUID() }
            for (index, id) in ids.enumerated() {
                try await connection.execute("INSERT INTO items VALUES (\(id), \("item \(index)"), \(Int64(index)))")
            }
            let some = PostgresArray(Array(ids[10..<260]) + [UUID()])
            let found = try await connection.query("SELECT count(*) FROM items WHERE id = ANY(\(some))").first!
            #expect(try found.decode(Int.self, column: 0) == 250)
            let names = PostgresArray(["item 1", "Zoë's", "", "item 299"])
            #expect(try await connection.query("SELECT size FROM items WHERE name = ANY(\(names)) ORDER BY size")
                .map { try $0.decode(Int64.self, column: 0) } == [1, 299])
            let sizes = PostgresArray([Int64.min, 5, Int64.max])
            let echoed = try await connection.query("SELECT unnest(\(sizes))").map { try $0.decode(Int64.self, column: 0) }
            #expect(echoed == [Int64.min, 5, Int64.max])
            let none = try await connection.query("SELECT cardinality(\(PostgresArray([UUID]())))").first!
            #expect(try none.decode(Int32.self, column: 0) == 0)
        }
    }

    @Test func emptyAndLargeByteaStayDistinctFromNull() async throws {
        try await TestDatabase.withConnection { connection, _ in
            try await connection.execute("CREATE TABLE blobs (n int PRIMARY KEY, data bytea)")
            let large = (0..<2048).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
            try await connection.execute("INSERT INTO blobs VALUES (1, \([UInt8]())), (2, \(large)), (3, \(nil as [UInt8]?))")
            let rows = try await connection.query("SELECT data, data IS NULL, length(data) FROM blobs ORDER BY n")
            #expect(try rows[0].decode([UInt8]?.self, column: 0) == [])
            #expect(try rows[0].decode(Bool.self, column: 1) == false)
            #expect(try rows[1].decode([UInt8].self, column: 0) == large)
            #expect(try rows[1].decode(Int32.self, column: 2) == 2048)
            #expect(try rows[2].decode([UInt8]?.self, column: 0) == nil)
        }
    }

    @Test(arguments: ["", "plain ascii", "Zoë Ångström", "家族の医療記録", "👨‍👩‍👧‍👦 e\u{301}", "עברית ועربية", "quote ' and \" and \\ and $1"])
    func unicodeTextRoundTrips(_ text: String) async throws {
        try await TestDatabase.withConnection { connection, _ in
            let rows = try await connection.query("SELECT \(text), length(\(text))")
            #expect(try rows[0].decode(String.self, column: 0) == text)
            #expect(try rows[0].decode(Int32.self, column: 1) == Int32(text.unicodeScalars.count))
        }
    }

    @Test func timestampsKeepMicrosecondsAndAgreeWithTheServer() async throws {
        try await TestDatabase.withConnection { connection, _ in
            let date = Date(timeIntervalSinceReferenceDate: 789_012_345.654321)
            let rows = try await connection.query("""
                SELECT \(date), to_char(\(date) AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US'),
                       '2026-01-02 03:04:05.000006+00'::timestamptz, 'infinity'::timestamptz
                """)
            let back = try rows[0].decode(Date.self, column: 0)
            #expect(abs(back.timeIntervalSinceReferenceDate - date.timeIntervalSinceReferenceDate) < 0.000_000_5)
            #expect(try rows[0].decode(String.self, column: 1) == "2026-01-02 02:05:45.654321")
            let fromServer = try rows[0].decode(Date.self, column: 2)
            let expected = try #require(ISO8601DateFormatter().date(from: "2026-01-02T03:04:05Z"))
            #expect(abs(fromServer.timeIntervalSince(expected) - 0.000_006) < 0.000_000_5)
            #expect(try rows[0].decode(Date.self, column: 3) == .distantFuture)
        }
    }

    @Test func jsonbIsRealJSONOnTheServer() async throws {
        try await TestDatabase.withConnection { connection, _ in
            let doc = try PostgresJSON(encoding: Profile(name: "Ada", tags: ["x"], age: 36))
            let rows = try await connection.query("SELECT \(doc) ->> 'name', (\(doc) -> 'age')::int, \(doc)")
            #expect(try rows[0].decode(String.self, column: 0) == "Ada")
            #expect(try rows[0].decode(Int32.self, column: 1) == 36)
            #expect(try rows[0].decode(PostgresJSON.self, column: 2).decode(Profile.self).tags == ["x"])

            let invalid = PostgresJSON(bytes: Array("{not json".utf8))
            let error = await #expect(throws: PostgresError.self) { try await connection.query("SELECT \(invalid)") }
            #expect(error?.sqlState == "22P02")
        }
    }

    @Test func interpolatedValuesAreBoundNotSpliced() async throws {
        let hostile = "x'); DROP TABLE victims; --"
        let query: PostgresQuery = "SELECT \(hostile) AS v, \(identifier: "Odd \"Name\"")"
        #expect(query.sql == "SELECT $1 AS v, \"Odd \"\"Name\"\"\"")
        #expect(query.bindings.count == 1)
        #expect(!query.description.contains("DROP"))
        try await TestDatabase.withConnection { connection, _ in
            try await connection.execute("CREATE TABLE victims (n int)")
            let rows = try await connection.query("SELECT \(hostile) AS v")
            #expect(try rows[0].decode(String.self, column: "v") == hostile)
            #expect(try await connection.query("SELECT count(*) FROM victims")[0].decode(Int.self, column: 0) == 0)
        }
    }

    @Test func decodingMismatchesNameTheColumnAndTypes() async throws {
        try await TestDatabase.withConnection { connection, _ in
            let row = try #require(try await connection.query("SELECT 42::int8 AS answer, NULL::text AS nothing").first)
            let mismatch = #expect(throws: PostgresError.self) { try row.decode(String.self, column: "answer") }
            #expect(mismatch?.code == .typeMismatch)
            #expect(mismatch?.column == "answer")
            #expect(mismatch?.message.contains("int8") == true)
            #expect(!(mismatch?.description.contains("42") ?? true))

            let narrowing = #expect(throws: PostgresError.self) { try row.decode(Int32.self, column: 0) }
            #expect(narrowing?.code == .typeMismatch)

            let null = #expect(throws: PostgresError.self) { try row.decode(String.self, column: "nothing") }
            #expect(null?.code == .unexpectedNull)
            #expect(try row.decode(String?.self, column: "nothing") == nil)

            let missing = #expect(throws: PostgresError.self) { try row.decode(Int.self, column: "nope") }
            #expect(missing?.code == .columnNotFound)
            let wrongArity = #expect(throws: PostgresError.self) { try row.decode(Int.self) }
            #expect(wrongArity?.code == .columnNotFound)
        }
    }
}
