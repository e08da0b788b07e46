import Foundation
import RescindPostgres
import Testing

@Suite("Binary COPY bulk writes")
struct PostgresCopyTests {
    /// Deterministic 2 KiB payload for row `n`, so the read-back can be checked byte for byte.
    static func payload(_ n: Int) -> [UInt8] {
        var state = UInt64(n) &* 0x9E37_79B9_7F4A_7C15 | 1
        return (0..<2048).map { _ in
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return UInt8(truncatingIfNeeded: state)
        }
    }

    /// FNV-1a over every payload, in row order.
    static func checksum(_ payloads: some Sequence<[UInt8]>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for payload in payloads {
            for byte in payload {
                hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
            }
        }
        return hash
    }

    @Test func tenThousandRowsOfTwoKiBInOneTransaction() async throws {
        try await TestDatabase.withConnection { connection, _ in
            try await connection.execute("""
                CREATE TABLE records (n int8 PRIMARY KEY, id uuid NOT NULL, body bytea NOT NULL,
                                      created timestamptz NOT NULL, note text)
                """)
            let rowCount = 10_000
            let payloads = (0..<rowCount).map(Self.payload)
            let now = Date()
            let clock = ContinuousClock()
            let started = clock.now
            let copied = try await connection.transaction { connection in
                try await connection.copyFrom(table: "records", columns: ["n", "id", "body", "created", "note"]) { writer in
                    for n in 0..<rowCount {
                        try writer.append(n, UUID(), payloads[n], now, n.isMultiple(of: 10) ? nil : "row \(n)")
                    }
                }
            }
            let elapsed = clock.now - started
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            print("COPY binary: \(rowCount) rows x 2 KiB in \(elapsed) = \(Int(Double(rowCount) / seconds)) rows/s")
            #expect(copied == rowCount)

            let summary = try await connection.query("""
                SELECT count(*), sum(length(body)), count(note), count(DISTINCT id) FROM records
                """)
            let (count, bytes, notes, ids) = try summary[0].decode(Int.self, Int.self, Int.self, Int.self)
            #expect(count == rowCount)
            #expect(bytes == rowCount * 2048)
            #expect(notes == rowCount - rowCount / 10)
            #expect(ids == rowCount)

            let stored = try await connection.query("SELECT body FROM records ORDER BY n").map { try $0.decode([UInt8].self, column: 0) }
            #expect(Self.checksum(stored) == Self.checksum(payloads))
            #expect(stored == payloads)
        }
    }

    @Test func aThrowingWriterAbortsTheCopy() async throws {
        struct Stop: Error {}
        try await TestDatabase.withConnection { connection, _ in
            try await connection.execute("CREATE TABLE staged (n int8)")
            await #expect(throws: Stop.self) {
                try await connection.copyFrom(table: "staged", columns: ["n"]) { writer in
                    for n in 0..<100_000 { try writer.append(n) }  // several chunks already sent
                    throw Stop()
                }
            }
            #expect(try await connection.query("SELECT count(*) FROM staged")[0].decode(Int.self, column: 0) == 0)
        }
    }

    @Test func rowsThatDoNotFitTheColumnsAreRejectedBeforeSending() async throws {
        try await TestDatabase.withConnection { connection, _ in
            try await connection.execute("CREATE TABLE typed (small int4, label text)")
            let wrongType = await #expect(throws: PostgresError.self) {
                try await connection.copyFrom(table: "typed", columns: ["small", "label"]) { writer in
                    try writer.append(Int32(1), "ok")
                    try writer.append(2, "int8 into int4")
                }
            }
            #expect(wrongType?.code == .invalidCopyRow)
            #expect(wrongType?.column == "small")

            let wrongCount = await #expect(throws: PostgresError.self) {
                try await connection.copyFrom(table: "typed", columns: ["small", "label"]) { writer in
                    try writer.append(Int32(1))
                }
            }
            #expect(wrongCount?.code == .invalidCopyRow)

            let inserted = try await connection.copyFrom(table: "typed", columns: ["small", "label"]) { writer in
                try writer.append(Int32(1), "one")
                try writer.append(nil as Int32?, nil as String?)
            }
            #expect(inserted == 2)
        }
    }

    @Test func aConstraintViolationInsideCopyIsAServerError() async throws {
        try await TestDatabase.withConnection { connection, _ in
            try await connection.execute("CREATE TABLE unique_rows (n int8 PRIMARY KEY)")
            let error = await #expect(throws: PostgresError.self) {
                try await connection.copyFrom(table: "unique_rows", columns: ["n"]) { writer in
                    try writer.append(1)
                    try writer.append(1)
                }
            }
            #expect(error?.isUniqueViolation == true)
            #expect(try await connection.query("SELECT count(*) FROM unique_rows")[0].decode(Int.self, column: 0) == 0)
        }
    }
}
