import Foundation

/// A plain-HTTP loopback proxy in front of a service, for driving the service with the real
/// clients (`UserSession`, the CLI's flows) while `contract` checks every answer against the
/// document. The client reaches it with `ClientTLS(plainHTTP: .loopback)`; the proxy reaches
/// the service over its own TLS with the suite's CA.
public enum RecordingProxy {
    public static func start(forwardingTo target: URL, contract: OpenAPIContract) async throws -> ForwardingProxy {
        try await ForwardingProxy.start(forwardingTo: target) { exchange in
            let answer = try await exchange.forward()
            contract.record(
                method: exchange.method, path: exchange.path, status: answer.status, contentType: answer.contentType,
                body: answer.body)
            if (200..<300).contains(answer.status), exchange.method != "GET" {
                contract.recordAcceptedRequest(
                    method: exchange.method, path: exchange.path,
                    contentType: exchange.headers.first { $0.0.lowercased() == "content-type" }?.1, body: exchange.body)
            }
            return answer
        }
    }
}
