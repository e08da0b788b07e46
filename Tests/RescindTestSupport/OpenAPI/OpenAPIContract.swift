import Foundation
import Synchronization

/// Checks a running service against its OpenAPI document, answer by answer: every answer's
/// status must be documented for its operation, its content type too, and a JSON body must
/// conform to the documented schema. Records which operations were seen answering with a
/// success and with a client error, so a test can require both of every operation.
public final class OpenAPIContract: Sendable {
    public let document: OpenAPIDocument
    private let state = Mutex(State())

    struct State {
        var problems: [String] = []
        var seen: [OpenAPIDocument.Operation: Set<Int>] = [:]
        var answers = 0
        var requestsChecked = 0
    }

    public init(document: OpenAPIDocument) {
        self.document = document
    }

    /// Checks one answer to `method path` (a concrete path, with its query if any).
    public func record(method: String, path: String, status: Int, contentType: String?, body: Data) {
        guard let operation = document.operation(method: method, path: path) else {
            // Not a documented operation: the router must refuse it as such (404/405), in the error shape.
            let shaped = (try? JSONSerialization.jsonObject(with: body) as? [String: Any])?["error"] != nil
            if ![404, 405].contains(status) || !shaped {
                state.withLock { $0.problems.append("\(method) \(path): undocumented, answered \(status)") }
            }
            return
        }
        let problems = document.problems(of: operation, status: status, contentType: contentType, body: body)
        state.withLock {
            $0.answers += 1
            $0.problems += problems.map { "\($0) (\(method) \(path))" }
            $0.seen[operation, default: []].insert(status)
        }
    }

    /// Checks the body of a request the service accepted against the documented request schema
    /// (the recording proxy does this for every request the real clients send).
    public func recordAcceptedRequest(method: String, path: String, contentType: String?, body: Data) {
        guard let operation = document.operation(method: method, path: path) else { return }
        let problems = document.requestProblems(of: operation, contentType: contentType, body: body)
        state.withLock {
            $0.problems += problems.map { "\($0) (\(method) \(path))" }
            $0.requestsChecked += 1
        }
    }

    /// Requests whose body was checked against the document.
    public var requestsChecked: Int { state.withLock { $0.requestsChecked } }

    /// Sends a request with `TestHTTP` and checks the answer.
    @discardableResult
    public func send(
        _ method: String, _ path: String, on baseURL: URL, token: String? = nil, headers: [(String, String)] = [],
        body: Data? = nil, contentType: String = "application/json"
    ) async throws -> TestHTTP.Answer {
        var all = headers
        if let token { all.append(("Authorization", "Bearer \(token)")) }
        if body != nil { all.append(("Content-Type", contentType)) }
        let url = URL(string: baseURL.absoluteString + path)!
        let answer = try await TestHTTP.send(method, url, headers: all, body: body)
        record(method: method, path: path, status: answer.status, contentType: answer.contentType, body: answer.body)
        return answer
    }

    /// Every problem found so far.
    public var problems: [String] { state.withLock { $0.problems } }
    public var answers: Int { state.withLock { $0.answers } }

    /// The statuses each operation answered with.
    public var seen: [OpenAPIDocument.Operation: Set<Int>] { state.withLock { $0.seen } }

    /// Operations never seen answering with a 2xx, or with a 4xx although the document lists one.
    public func coverageGaps(exempt: Set<String> = []) -> [String] {
        let seen = self.seen
        var gaps: [String] = []
        for operation in document.operations.sorted() where !exempt.contains(operation.description) {
            let statuses = seen[operation] ?? []
            if !statuses.contains(where: { (200..<300).contains($0) }) { gaps.append("\(operation): no success seen") }
            let documentedClientErrors = document.statuses(of: operation).filter { (400..<500).contains($0) }
            if !documentedClientErrors.isEmpty, !statuses.contains(where: { (400..<500).contains($0) }) {
                gaps.append("\(operation): no client error seen")
            }
        }
        return gaps
    }

    /// A concrete path for a template, each `{param}` replaced by `value`.
    public static func path(_ template: String, _ value: String) -> String {
        var result = ""
        var inParameter = false
        for character in template {
            if character == "{" { inParameter = true; result += value } else if character == "}" { inParameter = false } else if !inParameter { result.append(character) }
        }
        return result
    }

    /// The hostile half every operation gets: the template's parameters as a random UUID and as
    /// junk, without a credential and with a refused one, and a write's body as junk, `{}` and
    /// wrong types. Every answer is checked like any other.
    public func sendInvalidRequests(on baseURL: URL, token: String?, skip: Set<String> = []) async throws {
        for operation in document.operations.sorted() where !skip.contains(operation.description) {
            let hasParameters = operation.path.contains("{")
            var paths = [Self.path(operation.path, UUID().uuidString.lowercased())]
            if hasParameters { paths += [Self.path(operation.path, "not-a-uuid"), Self.path(operation.path, "%00")] }
            let bodies: [Data?] =
                ["POST", "PUT", "PATCH"].contains(operation.method)
                ? [Data("{".utf8), Data("{}".utf8), Data(#"{"records":5,"new_fmk_version":"x","user_id":[],"device":null}"#.utf8), Data("[]".utf8)]
                : [nil]
            for path in paths {
                for body in bodies {
                    try await send(operation.method, path, on: baseURL, token: nil, body: body)
                    try await send(operation.method, path, on: baseURL, token: "refused-" + UUID().uuidString, body: body)
                    if let token { try await send(operation.method, path, on: baseURL, token: token, body: body) }
                }
            }
        }
    }
}
