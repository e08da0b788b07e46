import Foundation
import Yams

/// A service's hand-written OpenAPI document, read with Yams: its operations, and what each
/// documents as the answer for a status code.
public struct OpenAPIDocument: @unchecked Sendable {
    // @unchecked: an immutable tree of plain values, only read.
    public let root: [String: Any]

    /// An operation as `METHOD /path/{param}`, the form the routers list theirs in.
    public struct Operation: Hashable, Sendable, CustomStringConvertible, Comparable {
        public let method: String
        public let path: String
        public var description: String { "\(method) \(path)" }
        public static func < (lhs: Operation, rhs: Operation) -> Bool { lhs.description < rhs.description }
    }

    /// - Parameter path: relative to the repository, e.g. `Sources/AuditService/Resources/openapi.yaml`.
    public static func load(_ path: String) throws -> OpenAPIDocument {
        let text = try String(contentsOf: GrantServiceHarness.repositoryRoot.appendingPathComponent(path), encoding: .utf8)
        guard let root = Self.plain(try Yams.load(yaml: text)) as? [String: Any] else {
            throw HarnessError.unexpected("\(path) is not a YAML mapping")
        }
        return OpenAPIDocument(root: root)
    }

    /// Yams' values with string keys throughout.
    private static func plain(_ value: Any?) -> Any? {
        switch value {
        case let mapping as [AnyHashable: Any]:
            var object: [String: Any] = [:]
            for (key, member) in mapping { object["\(key)"] = plain(member) }
            return object
        case let mapping as [String: Any]:
            return mapping.mapValues { plain($0) as Any }
        case let sequence as [Any]:
            return sequence.map { plain($0) as Any }
        default:
            return value
        }
    }

    private var paths: [String: Any] { root["paths"] as? [String: Any] ?? [:] }

    public var operations: Set<Operation> {
        var operations: Set<Operation> = []
        for (path, item) in paths {
            for method in (item as? [String: Any] ?? [:]).keys
            where ["get", "put", "post", "delete", "patch", "head", "options"].contains(method) {
                operations.insert(Operation(method: method.uppercased(), path: path))
            }
        }
        return operations
    }

    /// The documented operation a concrete request matches (`{param}` matches one segment),
    /// preferring the template with the fewest parameters.
    public func operation(method: String, path: String) -> Operation? {
        let segments = path.split(separator: "?").first.map { $0.split(separator: "/", omittingEmptySubsequences: false) } ?? []
        let candidates = operations.filter { operation in
            guard operation.method == method.uppercased() else { return false }
            let template = operation.path.split(separator: "/", omittingEmptySubsequences: false)
            guard template.count == segments.count else { return false }
            return zip(template, segments).allSatisfy { $0.hasPrefix("{") && $0.hasSuffix("}") && !$1.isEmpty || $0 == $1 }
        }
        return candidates.min { $0.path.filter { $0 == "{" }.count < $1.path.filter { $0 == "{" }.count }
    }

    private func resolved(_ node: Any?) -> [String: Any]? {
        guard var object = node as? [String: Any] else { return nil }
        while let reference = object["$ref"] as? String, reference.hasPrefix("#/") {
            var target: Any = root
            for part in reference.dropFirst(2).split(separator: "/") {
                guard let next = (target as? [String: Any])?[String(part)] else { return nil }
                target = next
            }
            guard let next = target as? [String: Any] else { return nil }
            object = next
        }
        return object
    }

    /// The documented statuses of an operation.
    public func statuses(of operation: Operation) -> Set<Int> {
        let responses = (paths[operation.path] as? [String: Any])?[operation.method.lowercased()] as? [String: Any]
        return Set(((responses?["responses"] as? [String: Any]) ?? [:]).keys.compactMap { Int($0) })
    }

    /// What is wrong with a request body the service accepted (a 2xx answer): a content type the
    /// operation does not document, or a JSON body that does not conform to its request schema.
    public func requestProblems(of operation: Operation, contentType: String?, body: Data) -> [String] {
        let item = (paths[operation.path] as? [String: Any])?[operation.method.lowercased()] as? [String: Any]
        guard let requestBody = resolved(item?["requestBody"]), let content = requestBody["content"] as? [String: Any] else {
            return body.isEmpty ? [] : ["\(operation): a request body where none is documented"]
        }
        let mediaType = (contentType ?? "").split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        guard let media = content[mediaType] as? [String: Any] else {
            return ["\(operation) request: content type \(contentType ?? "none") is not one of \(content.keys.sorted())"]
        }
        guard mediaType == "application/json", let schema = media["schema"] as? [String: Any] else { return [] }
        guard let value = try? JSONSerialization.jsonObject(with: body, options: .fragmentsAllowed) else {
            return ["\(operation) request: the body is not JSON"]
        }
        return JSONSchemaValidator(schema: schema, root: root).problems(value: value).map { "\(operation) request: \($0)" }
    }

    /// What is wrong with an answer to `operation`: an undocumented status, a content type the
    /// status does not document, or a JSON body that does not conform to its schema.
    public func problems(of operation: Operation, status: Int, contentType: String?, body: Data) -> [String] {
        let item = (paths[operation.path] as? [String: Any])?[operation.method.lowercased()] as? [String: Any]
        guard let response = resolved((item?["responses"] as? [String: Any])?[String(status)]) else {
            return ["\(operation): status \(status) is not documented"]
        }
        guard let content = response["content"] as? [String: Any] else {
            return body.isEmpty ? [] : ["\(operation) \(status): a body where none is documented"]
        }
        let mediaType = (contentType ?? "").split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        guard let media = content[mediaType] as? [String: Any] else {
            return ["\(operation) \(status): content type \(contentType ?? "none") is not one of \(content.keys.sorted())"]
        }
        guard mediaType == "application/json", let schema = media["schema"] as? [String: Any] else { return [] }
        guard let value = try? JSONSerialization.jsonObject(with: body, options: .fragmentsAllowed) else {
            return ["\(operation) \(status): the body is not JSON"]
        }
        return JSONSchemaValidator(schema: schema, root: root).problems(value: value).map { "\(operation) \(status): \($0)" }
    }
}
