import Yams

/// Writes the Swift declaration of every wire type an OpenAPI document's schemas name with
/// `x-swift-type`, so that the document is the one statement of each type's fields.
///
/// What a schema says, and the Swift it becomes:
/// - `x-swift-type: Name` on an object schema (under `components/schemas`, or inline as a property's
///   or an array's items): a `public struct Name: Codable, Sendable, Equatable` with a public
///   memberwise `init`, nested in the struct it is inline in. On any other schema it only names the
///   hand-written Swift type that schema is (an enum, say), for the properties that refer to it.
/// - A property is named as `WireKeys` spells it back (`family_member_id` → `familyMemberID`), typed
///   by its schema: `uuid` → `UUID`, `date-time` → `Date`, base64 → `Data`, other strings (enums
///   included) → `String`, `integer` → `Int`, `boolean` → `Bool`, arrays, string-keyed maps, and a
///   `$ref` → the referenced schema's Swift type (its own name without `x-swift-type`, so a named
///   string enum is the Swift enum of that name).
///   `x-swift-type` on a property overrides that (`Int64`, a Swift enum).
/// - A property not `required`, or nullable, is optional with a default of `nil`; `x-swift-default`
///   gives a required one a default in the `init`. One both required and nullable is encoded as
///   `null` when nil rather than left out.
/// - `description`s become the documentation comments.
struct WireTypeGenerator {
    enum Failure: Error, CustomStringConvertible {
        case malformed(String)
        var description: String { switch self { case .malformed(let why): "openapi: \(why)" } }
    }

    /// The schemas of one document by name, for its `$ref`s.
    private var schemas: Node.Mapping = [:]
    private var lines: [String] = []

    static func generate(documents: [(name: String, text: String)]) throws -> String {
        var generator = WireTypeGenerator()
        generator.lines = [
            "// Generated from the OpenAPI documents by RescindWireTypes (Plugins/WireTypesPlugin): edit the",
            "// documents, not this file.",
            "import Foundation",
        ]
        for document in documents {
            guard let root = try Yams.compose(yaml: document.text)?.mapping,
                let schemas = root["components"]?.mapping?["schemas"]?.mapping
            else { throw Failure.malformed("\(document.name) has no components/schemas") }
            generator.schemas = schemas
            for (key, schema) in schemas {
                guard let name = schema.mapping?["x-swift-type"]?.string, isObject(schema) else { continue }
                guard let key = key.string else { continue }
                generator.lines.append("")
                let path = name.split(separator: ".").map(String.init)
                if path.count > 1 {
                    generator.lines.append("extension \(path.dropLast().joined(separator: ".")) {")
                    try generator.emitStruct(path.last!, schema: schema, context: "\(document.name) \(key)", depth: 1)
                    generator.lines.append("}")
                } else {
                    try generator.emitStruct(name, schema: schema, context: "\(document.name) \(key)", depth: 0)
                }
            }
        }
        return generator.lines.joined(separator: "\n") + "\n"
    }

    private static func isObject(_ schema: Node) -> Bool {
        schema.mapping?["properties"]?.mapping != nil
    }

    private struct Property {
        var name: String
        var type: String
        /// The container call that writes it: `encodeIfPresent` leaves a nil out, `encode` writes null.
        var encodeCall: String
        var defaultValue: String?
        var description: String?

        var encodesNull: Bool { type.hasSuffix("?") && encodeCall == "encode" }
    }

    private mutating func emitStruct(_ name: String, schema: Node, context: String, depth: Int) throws {
        let indent = String(repeating: "    ", count: depth)
        let mapping = schema.mapping!
        let required = Set((mapping["required"]?.sequence ?? []).compactMap(\.string))
        var properties: [Property] = []
        var nested: [(name: String, schema: Node)] = []
        for (key, value) in mapping["properties"]!.mapping! {
            guard let wireName = key.string, let swiftName = Self.camel(wireName) else {
                throw Failure.malformed("\(context): property \(key) has no Swift spelling")
            }
            var (type, nullable) = try swiftType(value, context: "\(context).\(wireName)", nested: &nested)
            let isRequired = required.contains(wireName)
            let optional = nullable || !isRequired
            if optional { type += "?" }
            properties.append(Property(
                name: swiftName, type: type, encodeCall: isRequired ? "encode" : "encodeIfPresent",
                defaultValue: value.mapping?["x-swift-default"]?.string ?? (optional ? "nil" : nil),
                description: value.mapping?["description"]?.string))
        }
        emitComment(mapping["description"]?.string, indent: indent)
        lines.append("\(indent)public struct \(name): Codable, Sendable, Equatable {")
        for inner in nested {
            try emitStruct(inner.name, schema: inner.schema, context: "\(context).\(inner.name)", depth: depth + 1)
            lines.append("")
        }
        for property in properties {
            emitComment(property.description, indent: indent + "    ")
            lines.append("\(indent)    public var \(Self.identifier(property.name)): \(property.type)")
        }
        lines.append("")
        let parameters = properties.map { property in
            "\(property.name): \(property.type)" + (property.defaultValue.map { " = \($0)" } ?? "")
        }
        lines.append("\(indent)    public init(\(parameters.joined(separator: ", "))) {")
        for property in properties {
            lines.append("\(indent)        self.\(property.name) = \(Self.identifier(property.name))")
        }
        lines.append("\(indent)    }")
        if properties.contains(where: \.encodesNull) {
            // Synthesized encoding leaves a nil out; the document requires these present, as null.
            lines.append("")
            lines.append("\(indent)    enum CodingKeys: CodingKey {")
            lines.append("\(indent)        case \(properties.map { Self.identifier($0.name) }.joined(separator: ", "))")
            lines.append("\(indent)    }")
            lines.append("")
            lines.append("\(indent)    public func encode(to encoder: any Encoder) throws {")
            lines.append("\(indent)        var container = encoder.container(keyedBy: CodingKeys.self)")
            for property in properties {
                lines.append("\(indent)        try container.\(property.encodeCall)(\(Self.identifier(property.name)), forKey: .\(Self.identifier(property.name)))")
            }
            lines.append("\(indent)    }")
        }
        lines.append("\(indent)}")
    }

    /// The Swift type of a property's schema (without the `?` of an optional), and whether the
    /// schema allows null.
    private func swiftType(_ schema: Node, context: String, nested: inout [(name: String, schema: Node)]) throws -> (String, Bool) {
        guard let mapping = schema.mapping else { throw Failure.malformed("\(context) is not a schema") }
        if let explicit = mapping["x-swift-type"]?.string {
            if Self.isObject(schema) { nested.append((explicit, schema)) }
            return (explicit, Self.allowsNull(mapping))
        }
        if let reference = mapping["$ref"]?.string {
            return (try referencedType(reference, context: context), false)
        }
        if let alternatives = mapping["oneOf"]?.sequence {
            let kept = alternatives.filter { $0.mapping?["type"]?.string != "null" }
            guard kept.count == 1 else { throw Failure.malformed("\(context): oneOf other than T or null") }
            return (try swiftType(kept[0], context: context, nested: &nested).0, kept.count < alternatives.count)
        }
        let nullable = Self.allowsNull(mapping)
        let type = mapping["type"]?.string ?? mapping["type"]?.sequence?.compactMap(\.string).first { $0 != "null" }
        switch type {
        case "string":
            return (Self.stringType(mapping), nullable)
        case "integer": return ("Int", nullable)
        case "boolean": return ("Bool", nullable)
        case "number": return ("Double", nullable)
        case "array":
            guard let items = mapping["items"] else { throw Failure.malformed("\(context): an array without items") }
            return ("[\(try swiftType(items, context: context + "[]", nested: &nested).0)]", nullable)
        case "object":
            guard let values = mapping["additionalProperties"], values.mapping != nil else {
                throw Failure.malformed("\(context): an inline object needs x-swift-type")
            }
            return ("[String: \(try swiftType(values, context: context + "{}", nested: &nested).0)]", nullable)
        default:
            throw Failure.malformed("\(context): no Swift type for type \(type ?? "none")")
        }
    }

    private func referencedType(_ reference: String, context: String) throws -> String {
        let prefix = "#/components/schemas/"
        guard reference.hasPrefix(prefix), let target = schemas[String(reference.dropFirst(prefix.count))]?.mapping else {
            throw Failure.malformed("\(context): \(reference) names no schema of this document")
        }
        if let explicit = target["x-swift-type"]?.string { return explicit }
        if target["type"]?.string == "string", target["enum"] == nil { return Self.stringType(target) }
        return String(reference.dropFirst(prefix.count))
    }

    private static func stringType(_ mapping: Node.Mapping) -> String {
        switch (mapping["format"]?.string, mapping["contentEncoding"]?.string) {
        case ("uuid", _): "UUID"
        case ("date-time", _): "Date"
        case (_, "base64"): "Data"
        default: "String"
        }
    }

    private static func allowsNull(_ mapping: Node.Mapping) -> Bool {
        mapping["type"]?.sequence?.contains { $0.string == "null" } ?? false
    }

    private mutating func emitComment(_ text: String?, indent: String) {
        guard let text, !text.isEmpty else { return }
        var line = ""
        for word in text.split(whereSeparator: \.isWhitespace) {
            if !line.isEmpty, indent.count + 4 + line.count + 1 + word.count > 100 {
                lines.append("\(indent)/// \(line)")
                line = ""
            }
            line += line.isEmpty ? String(word) : " \(word)"
        }
        if !line.isEmpty { lines.append("\(indent)/// \(line)") }
    }

    /// Words written in capitals in Swift names, by their wire spelling: the table `WireKeys`
    /// spells keys with, so a generated name encodes to the key it came from.
    static let acronyms: [Substring: String] = ["id": "ID", "ids": "IDs", "fmk": "FMK"]

    static func camel(_ key: String) -> String? {
        let words = key.split(separator: "_", omittingEmptySubsequences: false)
        guard let first = words.first, !words.contains(where: \.isEmpty) else { return nil }
        return words.dropFirst().reduce(String(first)) { name, word in
            name + (acronyms[word] ?? word.prefix(1).uppercased() + word.dropFirst())
        }
    }

    private static let keywords: Set<String> = ["default", "operator", "protocol", "extension", "internal", "public", "private", "static", "self", "init", "func", "var", "let", "in", "is", "as", "case", "where", "repeat"]

    static func identifier(_ name: String) -> String { keywords.contains(name) ? "`\(name)`" : name }
}
