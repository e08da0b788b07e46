import CLibPQ

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Waiting for asynchronous notifications (LISTEN/NOTIFY) on the connection's socket.
extension LibPQConnection {
    /// Blocks the calling thread in `poll()` until the socket is readable or the timeout passes.
    /// - Returns: whether input is waiting.
    func waitForInput(timeoutMilliseconds: Int32) throws -> Bool {
        try withConnection { connection in
            let socket = PQsocket(connection)
            guard socket >= 0 else { throw connectionError(connection) }
            var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, timeoutMilliseconds)
            if ready < 0 {
                guard errno == EINTR else {
                    throw PostgresError(code: .connectionLost, message: "poll() on the connection socket failed (errno \(errno))")
                }
                return false
            }
            return ready > 0
        }
    }

    /// Reads the input waiting on the socket (never blocks) and returns the notifications in it.
    /// - Throws: `.connectionLost` when the server closed the connection.
    func takeNotifications() throws -> [PostgresNotification] {
        try withConnection { connection in
            guard PQconsumeInput(connection) == 1, PQstatus(connection) == CONNECTION_OK else {
                throw PostgresError(
                    code: .connectionLost, message: Self.firstLines(of: PQerrorMessage(connection)) ?? "connection lost")
            }
            var notifications: [PostgresNotification] = []
            while let notification = PQnotifies(connection) {
                notifications.append(
                    PostgresNotification(
                        channel: String(cString: notification.pointee.relname),
                        payload: notification.pointee.extra.map { String(cString: $0) } ?? "",
                        backendPID: notification.pointee.be_pid))
                PQfreemem(notification)
            }
            return notifications
        }
    }
}
