import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import RescindTLS

/// Raw HTTP(S) for tests, over AsyncHTTPClient with a `ClientTLS` policy: `https://` URLs are
/// checked against the suite's CA (`TestTLS`) unless told otherwise, `http://` is allowed to
/// loopback only. (URLSession on Linux cannot be given a CA file.)
public enum TestHTTP {
    public struct Answer: Sendable {
        public let status: Int
        public let body: Data
        public let headers: [(String, String)]

        public init(status: Int, body: Data, headers: [(String, String)]) {
            self.status = status
            self.body = body
            self.headers = headers
        }

        public var contentType: String? { headers.first { $0.0.lowercased() == "content-type" }?.1 }
        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// The policy a test client uses for `url` when none is given.
    public static func defaultPolicy(for url: URL) async throws -> ClientTLS {
        url.scheme == "https" ? try await TestTLS.shared().client : ClientTLS(plainHTTP: .loopback)
    }

    public static func send(
        _ method: String, _ url: URL, headers: [(String, String)] = [], body: Data? = nil, tls: ClientTLS? = nil,
        timeout: Duration = .seconds(30)
    ) async throws -> Answer {
        let policy: ClientTLS
        if let tls { policy = tls } else { policy = try await defaultPolicy(for: url) }
        try policy.check(url)
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = HTTPMethod(rawValue: method)
        request.tlsConfiguration = try policy.configuration()
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(data: body)) }
        let response = try await HTTPClient.shared.execute(request, timeout: .init(timeout))
        var buffer = try await response.body.collect(upTo: 64 << 20)
        return Answer(
            status: Int(response.status.code), body: buffer.readData(length: buffer.readableBytes) ?? Data(),
            headers: response.headers.map { ($0.name, $0.value) })
    }

    /// The status, headers and first chunk of a `GET` whose body may never end (server-sent
    /// events); the connection is dropped after the first chunk.
    public static func head(
        ofStream url: URL, headers: [(String, String)] = [], tls: ClientTLS? = nil, timeout: Duration = .seconds(20)
    ) async throws -> Answer {
        let policy: ClientTLS
        if let tls { policy = tls } else { policy = try await defaultPolicy(for: url) }
        try policy.check(url)
        var request = HTTPClientRequest(url: url.absoluteString)
        request.tlsConfiguration = try policy.configuration()
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await HTTPClient.shared.execute(request, timeout: .init(timeout))
        var iterator = response.body.makeAsyncIterator()
        let first = try await iterator.next()
        return Answer(
            status: Int(response.status.code), body: first.map { Data(buffer: $0) } ?? Data(),
            headers: response.headers.map { ($0.name, $0.value) })
    }

    /// Streams the body of a `GET` as it arrives (server-sent events), until the server closes
    /// it or the task is cancelled.
    public static func stream(
        _ url: URL, headers: [(String, String)] = [], tls: ClientTLS? = nil, timeout: Duration = .seconds(120),
        onChunk: @escaping @Sendable (Data) -> Void
    ) async throws -> Int {
        let policy: ClientTLS
        if let tls { policy = tls } else { policy = try await defaultPolicy(for: url) }
        try policy.check(url)
        var request = HTTPClientRequest(url: url.absoluteString)
        request.tlsConfiguration = try policy.configuration()
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await HTTPClient.shared.execute(request, timeout: .init(timeout))
        for try await var chunk in response.body {
            onChunk(chunk.readData(length: chunk.readableBytes) ?? Data())
        }
        return Int(response.status.code)
    }
}
