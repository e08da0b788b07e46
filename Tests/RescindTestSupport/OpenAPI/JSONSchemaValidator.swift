import Foundation

/// Checks JSON against the subset of JSON Schema (2020-12) that the repository's `schemas/`
/// and the services' OpenAPI documents use: type (one or a list), const, enum, required,
/// properties, additionalProperties, propertyNames, items, minimum, maximum, minLength,
/// maxLength (in code points), maxItems, maxProperties, pattern, format (uuid, date-time,
/// byte), contentEncoding (base64), allOf, oneOf, if/then and local `$ref`s
/// (`#/components/schemas/…`, resolved in `root`). Anything else in a schema is reported,
/// so the subset cannot silently shrink.
public struct JSONSchemaValidator: @unchecked Sendable {
    // @unchecked: the schema is an immutable tree of JSONSerialization/Yams values, only read.
    public let schema: [String: Any]
    /// The document `$ref`s point into (the schema itself for a standalone schema file).
    let root: [String: Any]

    public init(schema: [String: Any], root: [String: Any]? = nil) {
        self.schema = schema
        self.root = root ?? schema
    }

    /// One of the repository's message schemas, `schemas/<name>.schema.json`.
    public static func load(_ name: String) throws -> JSONSchemaValidator {
        let url = GrantServiceHarness.repositoryRoot.appendingPathComponent("schemas/\(name).schema.json")
        return JSONSchemaValidator(schema: try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as! [String: Any])
    }

    /// Problems found, as `path: problem`; empty when `data` conforms.
    public func problems(_ data: Data) throws -> [String] {
        problems(value: try JSONSerialization.jsonObject(with: data, options: .fragmentsAllowed))
    }

    /// Problems of an already parsed JSON value.
    public func problems(value: Any) -> [String] {
        var problems: [String] = []
        check(value, against: schema, at: "$", into: &problems)
        return problems
    }

    private static let understood: Set<String> = [
        "$schema", "$id", "$ref", "$defs", "title", "description", "type", "const", "enum", "required", "properties",
        "additionalProperties", "items", "minimum", "pattern", "format", "allOf", "oneOf", "if", "then",
        "maximum", "minLength", "maxLength", "maxItems", "maxProperties", "propertyNames",
        // Annotations only.
        "examples", "default", "contentEncoding", "contentMediaType", "summary",
    ]

    private func resolve(_ reference: String) -> [String: Any]? {
        guard reference.hasPrefix("#/") else { return nil }
        var node: Any = root
        for part in reference.dropFirst(2).split(separator: "/") {
            guard let object = node as? [String: Any], let next = object[String(part)] else { return nil }
            node = next
        }
        return node as? [String: Any]
    }

    private func check(_ value: Any, against schema: [String: Any], at path: String, into problems: inout [String]) {
        // `x-` keywords are OpenAPI extensions (the Swift names of the generated types): annotations.
        for keyword in schema.keys where !Self.understood.contains(keyword) && !keyword.hasPrefix("x-") {
            problems.append("\(path): schema keyword \(keyword) is not supported by this validator")
        }
        if let reference = schema["$ref"] as? String {
            guard let target = resolve(reference) else {
                problems.append("\(path): unresolvable $ref \(reference)")
                return
            }
            check(value, against: target, at: path, into: &problems)
        }
        if let type = schema["type"] as? String, !Self.value(value, is: type) {
            problems.append("\(path): expected \(type)")
            return
        }
        if let types = schema["type"] as? [String], !types.contains(where: { Self.value(value, is: $0) }) {
            problems.append("\(path): expected one of \(types)")
            return
        }
        if let constant = schema["const"], !Self.equal(value, constant) { problems.append("\(path): expected \(constant)") }
        if let options = schema["enum"] as? [Any], !options.contains(where: { Self.equal(value, $0) }) {
            problems.append("\(path): \(value) is not one of \(options)")
        }
        // Through NSNumber: a large integer (2^63 - 1) does not bridge to Double with `as?`.
        let number = value is String ? nil : (value as? NSNumber)?.doubleValue
        if let minimum = Self.double(schema["minimum"]), let number, number < minimum {
            problems.append("\(path): below \(minimum)")
        }
        if let maximum = Self.double(schema["maximum"]), let number, number > maximum {
            problems.append("\(path): above \(maximum)")
        }
        if let text = value as? String {
            let length = text.unicodeScalars.count
            if let minimum = schema["minLength"] as? Int, length < minimum { problems.append("\(path): shorter than \(minimum)") }
            if let maximum = schema["maxLength"] as? Int, length > maximum { problems.append("\(path): longer than \(maximum)") }
            if let pattern = schema["pattern"] as? String, text.range(of: pattern, options: .regularExpression) == nil {
                problems.append("\(path): does not match \(pattern)")
            }
            if let format = schema["format"] as? String, !Self.string(text, hasFormat: format) {
                problems.append("\(path): not a \(format)")
            }
            if schema["contentEncoding"] as? String == "base64", Data(base64Encoded: text) == nil {
                problems.append("\(path): not base64")
            }
        }
        if let object = value as? [String: Any] {
            for name in schema["required"] as? [String] ?? [] where object[name] == nil {
                problems.append("\(path): missing \(name)")
            }
            if let maximum = schema["maxProperties"] as? Int, object.count > maximum {
                problems.append("\(path): more than \(maximum) properties")
            }
            if let names = schema["propertyNames"] as? [String: Any] {
                for name in object.keys { check(name, against: names, at: "\(path).\(name) (name)", into: &problems) }
            }
            let properties = schema["properties"] as? [String: Any] ?? [:]
            for (name, member) in object {
                if let property = properties[name] as? [String: Any] {
                    check(member, against: property, at: "\(path).\(name)", into: &problems)
                } else if let additional = schema["additionalProperties"] as? [String: Any] {
                    check(member, against: additional, at: "\(path).\(name)", into: &problems)
                } else if schema["additionalProperties"] as? Bool == false {
                    problems.append("\(path): unexpected property \(name)")
                }
            }
        }
        if let array = value as? [Any], let maximum = schema["maxItems"] as? Int, array.count > maximum {
            problems.append("\(path): more than \(maximum) items")
        }
        if let array = value as? [Any], let items = schema["items"] as? [String: Any] {
            for (index, element) in array.enumerated() { check(element, against: items, at: "\(path)[\(index)]", into: &problems) }
        }
        for part in schema["allOf"] as? [[String: Any]] ?? [] {
            check(value, against: part, at: path, into: &problems)
        }
        if let options = schema["oneOf"] as? [[String: Any]] {
            let matching = options.filter { option in
                var ignored: [String] = []
                check(value, against: option, at: path, into: &ignored)
                return ignored.isEmpty
            }
            if matching.count != 1 { problems.append("\(path): matches \(matching.count) of the oneOf schemas, not 1") }
        }
        if let condition = schema["if"] as? [String: Any], let consequence = schema["then"] as? [String: Any] {
            var ignored: [String] = []
            check(value, against: condition, at: path, into: &ignored)
            if ignored.isEmpty { check(value, against: consequence, at: path, into: &problems) }
        }
    }

    /// A bound as JSON or YAML gives it (Int, Double, or an NSNumber for large integers).
    private static func double(_ value: Any?) -> Double? {
        switch value {
        case let value as Int: Double(value)
        case let value as Double: value
        case let value as NSNumber: value.doubleValue
        default: nil
        }
    }

    private static func value(_ value: Any, is type: String) -> Bool {
        // JSONSerialization gives booleans as a distinct NSNumber subclass.
        let isBoolean = value is NSNumber && String(describing: Swift.type(of: value)).contains("Boolean")
        switch type {
        case "object": return value is [String: Any]
        case "array": return value is [Any]
        case "string": return value is String
        case "boolean": return isBoolean
        case "integer":
            guard let number = value as? NSNumber, !isBoolean, !(value is String) else { return false }
            return number.doubleValue.rounded() == number.doubleValue
        case "number": return value is NSNumber && !isBoolean && !(value is String)
        case "null": return value is NSNull
        default: return false
        }
    }

    private static func equal(_ lhs: Any, _ rhs: Any) -> Bool {
        if let lhs = lhs as? String, let rhs = rhs as? String { return lhs == rhs }
        return (lhs as? NSObject)?.isEqual(rhs) ?? false
    }

    private static func string(_ text: String, hasFormat format: String) -> Bool {
        switch format {
        case "uuid": UUID(uuidString: text) != nil
        case "date-time": (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text)) != nil
        case "byte": Data(base64Encoded: text) != nil
        default: true
        }
    }
}
