import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOFoundationCompat

/// A plain-HTTP loopback proxy in front of a service, for driving the service with the real
/// clients (`UserSession`, the CLI's flows) while `contract` checks every answer against the
/// document. The client reaches it with `ClientTLS(plainHTTP: .loopback)`; the proxy reaches
/// the service over its own TLS with the suite's CA.
public final class RecordingProxy: Sendable {
    public let baseURL: URL
    private let running: ServiceUnderTest

    private init(running: ServiceUnderTest) {
        self.running = running
        self.baseURL = running.baseURL
    }

    public static func start(forwardingTo target: URL, contract: OpenAPIContract) async throws -> RecordingProxy {
        let router = Router(context: BasicRequestContext.self)
        let forward: @Sendable (Request, BasicRequestContext) async throws -> Response = { request, _ in
            let body = try await request.body.collect(upTo: 64 << 20)
            var headers: [(String, String)] = []
            for name in [HTTPField.Name.authorization, .contentType, .accept, .init("Last-Event-ID")!] {
                if let value = request.headers[name] { headers.append((name.rawName, value)) }
            }
            let path = request.uri.description
            let answer = try await TestHTTP.send(
                request.method.rawValue, URL(string: target.absoluteString + path)!, headers: headers,
                body: body.readableBytes > 0 || request.method != .get ? Data(buffer: body) : nil)
            contract.record(
                method: request.method.rawValue, path: path, status: answer.status, contentType: answer.contentType,
                body: answer.body)
            if (200..<300).contains(answer.status), request.method != .get {
                contract.recordAcceptedRequest(
                    method: request.method.rawValue, path: path, contentType: request.headers[.contentType],
                    body: Data(buffer: body))
            }
            var fields = HTTPFields()
            if let type = answer.contentType { fields[.contentType] = type }
            return Response(
                status: .init(code: answer.status), headers: fields, body: .init(byteBuffer: ByteBuffer(data: answer.body)))
        }
        for method in [HTTPRequest.Method.get, .put, .post, .delete] {
            router.on("**", method: method, use: forward)
        }
        let logger = Logger(label: "test.recording-proxy")
        let running = try await ServiceUnderTest.start(logger: logger, tls: false) { onServerRunning in
            Application(
                router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: "recording-proxy"),
                onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? 0) }, logger: logger)
        }
        return RecordingProxy(running: running)
    }

    public func stop() async {
        await running.stop()
    }
}
