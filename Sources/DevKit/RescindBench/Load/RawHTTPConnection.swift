import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One keep-alive HTTP/1.1 connection over a blocking socket bound to a chosen loopback source
/// address (127.0.0.x), for the load section's flood. The service keys per-address budgets on
/// the connection's peer address, so binding distinct sources is what makes "from many
/// addresses" real without trusting `X-Forwarded-For`. The shared client (AsyncHTTPClient)
/// cannot choose its source address, and a flood should cost its sender as little as it can:
/// one thread, one socket, no TLS (the bench stack serves plain HTTP on loopback).
///
/// Not `Sendable`: one thread owns each connection.
final class RawHTTPConnection {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    struct Response {
        let status: Int
        let body: [UInt8]
    }

    let source: String
    let port: UInt16
    private var descriptor: Int32 = -1
    private var buffer: [UInt8] = []

    init(source: String, port: UInt16) {
        self.source = source
        self.port = port
    }

    deinit { disconnect() }

    func disconnect() {
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
        buffer.removeAll(keepingCapacity: true)
    }

    /// Sends one request and reads its whole answer, connecting first if needed. A failed
    /// exchange closes the connection (the next one reconnects) and throws.
    func exchange(_ method: String, _ path: String, body: [UInt8]) throws -> Response {
        if descriptor < 0 { try connect() }
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        if !body.isEmpty { head += "Content-Type: application/json\r\n" }
        head += "Content-Length: \(body.count)\r\n\r\n"
        do {
            try write(Array(head.utf8) + body)
            return try readResponse()
        } catch {
            disconnect()
            throw error
        }
    }

    private func connect() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket() failed: errno \(errno)") }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        guard inet_pton(AF_INET, source, &local.sin_addr) == 1 else {
            close(fd)
            throw Failure(description: "not an IPv4 address: \(source)")
        }
        var remote = sockaddr_in()
        remote.sin_family = sa_family_t(AF_INET)
        remote.sin_port = port.bigEndian
        remote.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        let size = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, size) } }
        guard bound == 0 else {
            let code = errno
            close(fd)
            throw Failure(description: "bind() to \(source) failed: errno \(code)")
        }
        let connected = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, size) }
        }
        guard connected == 0 else {
            let code = errno
            close(fd)
            throw Failure(description: "connect() from \(source) failed: errno \(code)")
        }
        descriptor = fd
        buffer.removeAll(keepingCapacity: true)
    }

    private func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { raw in
                Glibc.send(descriptor, raw.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
            guard sent > 0 else { throw Failure(description: "send() failed: errno \(errno)") }
            offset += sent
        }
    }

    /// Reads more bytes into `buffer`. - Throws: when the peer closed or the read timed out.
    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 16_384)
        let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress!, $0.count, 0) }
        guard count > 0 else { throw Failure(description: count == 0 ? "connection closed" : "recv() failed: errno \(errno)") }
        buffer.append(contentsOf: chunk[0..<count])
    }

    private static let headEnd: [UInt8] = Array("\r\n\r\n".utf8)

    /// One response: a status line and headers, then a body of `Content-Length` bytes or chunks.
    private func readResponse() throws -> Response {
        var headLength: Int?
        while headLength == nil {
            headLength = Self.find(Self.headEnd, in: buffer).map { $0 + 4 }
            if headLength == nil { try fill() }
        }
        let head = String(decoding: buffer[0..<headLength!], as: UTF8.self)
        buffer.removeFirst(headLength!)
        let lines = head.split(separator: "\r\n")
        guard let statusLine = lines.first, let status = statusLine.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else {
            throw Failure(description: "malformed status line")
        }
        var contentLength = 0
        var chunked = false
        var closes = false
        for line in lines.dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2 else { continue }
            let name = parts[0].lowercased()
            let value = parts[1].trimmingCharacters(in: .whitespaces).lowercased()
            if name == "content-length" { contentLength = Int(value) ?? 0 }
            if name == "transfer-encoding", value.contains("chunked") { chunked = true }
            if name == "connection", value == "close" { closes = true }
        }
        var body: [UInt8] = []
        if chunked {
            while true {
                var lineEnd = Self.find(Array("\r\n".utf8), in: buffer)
                while lineEnd == nil {
                    try fill()
                    lineEnd = Self.find(Array("\r\n".utf8), in: buffer)
                }
                let size = Int(String(decoding: buffer[0..<lineEnd!], as: UTF8.self).split(separator: ";")[0], radix: 16) ?? 0
                buffer.removeFirst(lineEnd! + 2)
                while buffer.count < size + 2 { try fill() }
                body.append(contentsOf: buffer[0..<size])
                buffer.removeFirst(size + 2)
                if size == 0 { break }
            }
        } else {
            while buffer.count < contentLength { try fill() }
            body = Array(buffer[0..<contentLength])
            buffer.removeFirst(contentLength)
        }
        if closes { disconnect() }
        return Response(status: status, body: body)
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for index in 0...(haystack.count - needle.count) where haystack[index] == needle[0] {
            if Array(haystack[index..<(index + needle.count)]) == needle { return index }
        }
        return nil
    }
}
