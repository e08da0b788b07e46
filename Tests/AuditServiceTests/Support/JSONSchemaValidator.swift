import Foundation

/// Checks JSON against the subset of JSON Schema (2020-12) the repository's
/// `schemas/` use: type, const, enum, required, properties, additionalProperties,
/// propertyNames, items, minimum, maximum, minLength, maxLength (in code points), maxItems,
/// maxProperties, pattern, format (uuid, date-time, byte), allOf and if/then.
/// Anything else in a schema is reported, so the subset cannot silently shrink.
struct JSONSchemaValidator {
    let schema: [String: Any]

    static func load(_ name: String) throws -> JSONSchemaValidator {
        let url = repositoryRoot.appendingPathComponent("schemas/\(name).schema.json")
        return JSONSchemaValidator(schema: try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as! [String: Any])
    }

    static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
    }

    /// Problems found, as `path: problem`; empty when `data` conforms.
    func problems(_ data: Data) throws -> [String] {
        var problems: [String] = []
        check(try JSONSerialization.jsonObject(with: data, options: .fragmentsAllowed), against: schema, at: "$", into: &problems)
        return problems
    }

    private static let understood: Set<String> = [
        "$schema", "$id", "title", "description", "type", "const", "enum", "required", "properties",
        "additionalProperties", "items", "minimum", "pattern", "format", "allOf", "if", "then",
        "maximum", "minLength", "maxLength", "maxItems", "maxProperties", "propertyNames",
    ]

    private func check(_ value: Any, against schema: [String: Any], at path: String, into problems: inout [String]) {
        for keyword in schema.keys where !Self.understood.contains(keyword) {
            problems.append("\(path): schema keyword \(keyword) is not supported by this validator")
        }
        if let type = schema["type"] as? String, !Self.value(value, is: type) {
            problems.append("\(path): expected \(type)")
            return
        }
        if let constant = schema["const"], !Self.equal(value, constant) { problems.append("\(path): expected \(constant)") }
        if let options = schema["enum"] as? [Any], !options.contains(where: { Self.equal(value, $0) }) {
            problems.append("\(path): \(value) is not one of \(options)")
        }
        // Through NSNumber: a large integer (2^63 - 1) does not bridge to Double with `as?`.
        let number = value is String ? nil : (value as? NSNumber)?.doubleValue
        if let minimum = schema["minimum"] as? Double, let number, number < minimum {
            problems.append("\(path): below \(minimum)")
        }
        if let maximum = schema["maximum"] as? Double, let number, number > maximum {
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
            let properties = schema["properties"] as? [String: [String: Any]] ?? [:]
            for (name, member) in object {
                if let property = properties[name] {
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
        if let condition = schema["if"] as? [String: Any], let consequence = schema["then"] as? [String: Any] {
            var ignored: [String] = []
            check(value, against: condition, at: path, into: &ignored)
            if ignored.isEmpty { check(value, against: consequence, at: path, into: &problems) }
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
        (lhs as? NSObject)?.isEqual(rhs) ?? false
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
