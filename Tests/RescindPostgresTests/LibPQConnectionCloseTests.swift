import Logging
import Testing

@testable import RescindPostgres

/// A connection closed while a body holds its `PGconn` (a statement that timed out closes its
/// connection, and the code around it may go on to read the error or drain a COPY) is freed only
/// when the outermost body returns: no libpq call ever reads freed memory.
@Suite struct LibPQConnectionCloseTests {
    @Test func closingInsideABodyFreesTheConnectionAfterItReturns() throws {
        let connection = try LibPQConnection.connect(
            try TestDatabase.configuration().connectionParameters, logger: Logger(label: "rescind.test.libpq"))
        let pid = connection.backendPID
        #expect(pid != 0)
        try connection.withConnection { _ in
            try connection.withConnection { _ in connection.close() }
            // Asked to close: no new use begins, but the PGconn this body holds is not freed yet.
            #expect(connection.isClosed)
            #expect(!connection.isAlive())
            #expect(throws: PostgresError.self) { try connection.withConnection { _ in } }
            #expect(connection.backendPID == pid)
        }
        #expect(connection.isClosed)
        #expect(connection.backendPID == 0, "freed once the outermost body returned")
        #expect(throws: PostgresError.self) { try connection.withConnection { _ in } }
        connection.close()
    }
}
