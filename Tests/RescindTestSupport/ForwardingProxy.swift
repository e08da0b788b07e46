import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOFoundationCompat

/// A plain-HTTP loopback proxy in front of a service: each request goes to `handle`, which may
/// forward it to the service (over its TLS, with the suite's CA), look at or change the answer,
/// or answer itself. Clients reach it with `ClientTLS(plainHTTP: .loopback)`.
///
/// For the tests that record a contract (`RecordingProxy`) and for those that play a grant
/// service which answers every request as it likes (a substituted key, a made-up error).
public final class ForwardingProxy: Sendable {
    /// One request as the client sent it.
    public struct Exchange: Sendable {
        public let method: String
        /// The path and query.
        public let path: String
        public let body: Data
        let headers: [(String, String)]
        let target: URL

        /// The service's own answer to this request.
        public func forward() async throws -> TestHTTP.Answer {
            try await TestHTTP.send(
                method, URL(string: target.absoluteString + path)!, headers: headers,
                body: !body.isEmpty || method != "GET" ? body : nil)
        }
    }

    public let baseURL: URL
    private let running: ServiceUnderTest

    private init(running: ServiceUnderTest) {
        self.running = running
        self.baseURL = running.baseURL
    }

    public static func start(
        forwardingTo target: URL, handle: @escaping @Sendable (Exchange) async throws -> TestHTTP.Answer = { try await $0.forward() }
    ) async throws -> ForwardingProxy {
        let router = Router(context: BasicRequestContext.self)
        let forward: @Sendable (Request, BasicRequestContext) async throws -> Response = { request, _ in
            var body = try await request.body.collect(upTo: 64 << 20)
            var headers: [(String, String)] = []
            for name in [HTTPField.Name.authorization, .contentType, .accept, .init("Last-Event-ID")!] {
                if let value = request.headers[name] { headers.append((name.rawName, value)) }
            }
            let answer = try await handle(
                Exchange(
                    method: request.method.rawValue, path: request.uri.description,
                    body: body.readData(length: body.readableBytes) ?? Data(), headers: headers, target: target))
            var fields = HTTPFields()
            if let type = answer.contentType { fields[.contentType] = type }
            return Response(
                status: .init(code: answer.status), headers: fields, body: .init(byteBuffer: ByteBuffer(data: answer.body)))
        }
        for method in [HTTPRequest.Method.get, .put, .post, .delete] {
            router.on("**", method: method, use: forward)
        }
        let logger = Logger(label: "test.forwarding-proxy")
        let running = try await ServiceUnderTest.start(logger: logger, tls: false) { onServerRunning in
            Application(
                router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: "forwarding-proxy"),
                onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? 0) }, logger: logger)
        }
        return ForwardingProxy(running: running)
    }

    public func stop() async {
        await running.stop()
    }
}
