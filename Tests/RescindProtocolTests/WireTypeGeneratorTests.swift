import Foundation
import RescindProtocol
import Testing
import Yams

@testable import RescindWireTypes

/// The build step that writes RescindProtocol's HTTP types from the OpenAPI documents: what each
/// kind of schema becomes, that a document it cannot read fails the build with the place named,
/// and that every name it writes is the one `WireKeys` reads the document's key as.
@Suite struct WireTypeGeneratorTests {
    static let document = """
        components:
          schemas:
            Bytes: { type: string, contentEncoding: base64 }
            Colour: { type: string, enum: [red, blue] }
            Plain: { type: object, properties: { x: { type: string } } }
            Thing:
              x-swift-type: ThingResponse
              description: A thing, as served.
              type: object
              required: [thing_id, count, seen_at, change_seq, role, items]
              properties:
                thing_id: { type: string, format: uuid }
                count: { type: integer, x-swift-default: "1", description: How many. }
                seen_at: { type: string, format: date-time }
                change_seq: { type: [integer, "null"], x-swift-type: Int64 }
                body: { $ref: "#/components/schemas/Bytes" }
                colour: { $ref: "#/components/schemas/Colour" }
                plain: { $ref: "#/components/schemas/Plain" }
                role: { type: string, enum: [x, y] }
                items:
                  type: array
                  items: { x-swift-type: Item, type: object, required: [fmk_version], properties: { fmk_version: { type: integer } } }
                tags: { type: object, additionalProperties: { type: integer } }
                default: { oneOf: [ { type: boolean }, { type: "null" } ] }
        """

    static func lines(_ source: String) -> [String] {
        source.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
    }

    @Test func anObjectSchemaBecomesAStructWithItsFieldsInOrder() throws {
        let source = try WireTypeGenerator.generate(documents: [("test.yaml", Self.document)])
        let lines = Self.lines(source)
        #expect(lines.contains("/// A thing, as served."))
        #expect(lines.contains("public struct ThingResponse: Codable, Sendable, Equatable {"))
        #expect(lines.contains("public struct Item: Codable, Sendable, Equatable {"), "an inline object nests")
        #expect(lines.contains("public var fmkVersion: Int"))
        #expect(!lines.contains { $0.contains("struct Plain") }, "a schema without x-swift-type is only referred to")
        let declared = lines.filter { $0.hasPrefix("public var ") && !$0.contains("fmkVersion") }
        #expect(declared == [
            "public var thingID: UUID", "public var count: Int", "public var seenAt: Date", "public var changeSeq: Int64?",
            "public var body: Data?", "public var colour: Colour?", "public var plain: Plain?", "public var role: String",
            "public var items: [Item]", "public var tags: [String: Int]?", "public var `default`: Bool?",
        ])
        #expect(lines.contains("/// How many."))
        #expect(lines.contains(
            "public init(thingID: UUID, count: Int = 1, seenAt: Date, changeSeq: Int64? = nil, body: Data? = nil, colour: Colour? = nil, "
                + "plain: Plain? = nil, role: String, items: [Item], tags: [String: Int]? = nil, default: Bool? = nil) {"))
        #expect(lines.contains("self.default = `default`"))
    }

    @Test func aRequiredNullableFieldIsWrittenAsNullAndAnOptionalOneLeftOut() throws {
        let lines = Self.lines(try WireTypeGenerator.generate(documents: [("test.yaml", Self.document)]))
        #expect(lines.contains("try container.encode(changeSeq, forKey: .changeSeq)"))
        #expect(lines.contains("try container.encodeIfPresent(body, forKey: .body)"))
        #expect(lines.contains("try container.encode(thingID, forKey: .thingID)"))
        // Only the type with such a field encodes by hand.
        #expect(lines.filter { $0.hasPrefix("public func encode(to encoder") }.count == 1)
    }

    @Test(arguments: [
        ("Thing:\n      x-swift-type: T\n      type: object\n      properties: { x: { type: object } }", "test.yaml Thing.x"),
        ("Thing:\n      x-swift-type: T\n      type: object\n      properties: { x: { $ref: \"#/components/schemas/Nowhere\" } }", "Nowhere"),
        ("Thing:\n      x-swift-type: T\n      type: object\n      properties: { x: { oneOf: [ { type: string }, { type: integer } ] } }", "oneOf"),
        ("Thing:\n      x-swift-type: T\n      type: object\n      properties: { x: { type: array } }", "without items"),
    ])
    func aSchemaItCannotTypeFailsTheBuildNamingThePlace(schema: String, named: String) {
        let document = "components:\n  schemas:\n    " + schema + "\n"
        #expect {
            _ = try WireTypeGenerator.generate(documents: [("test.yaml", document)])
        } throws: { error in
            "\(error)".contains(named)
        }
    }

    @Test func aDocumentWithoutSchemasFailsTheBuild() {
        #expect(throws: WireTypeGenerator.Failure.self) { _ = try WireTypeGenerator.generate(documents: [("empty.yaml", "openapi: 3.1.0\n")]) }
    }

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Every property of every generated type, by key, through inline objects.
    static func generatedKeys() throws -> [String] {
        var keys: [String] = []
        func walk(_ schema: Node?) {
            guard let mapping = schema?.mapping else { return }
            for (key, value) in mapping["properties"]?.mapping ?? [:] {
                keys.append(key.string!)
                walk(value)
                walk(value.mapping?["items"])
            }
        }
        for path in ["Sources/GrantService/Resources/openapi.yaml", "Sources/AuditService/Resources/openapi.yaml"] {
            let text = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
            let schemas = try #require(try Yams.compose(yaml: text)?.mapping?["components"]?.mapping?["schemas"]?.mapping)
            for (_, schema) in schemas where schema.mapping?["x-swift-type"] != nil { walk(schema) }
        }
        return keys
    }

    @Test func everyNameItWritesIsTheOneWireKeysReadsTheKeyAs() throws {
        let keys = try Self.generatedKeys()
        #expect(keys.count > 300)
        for key in Set(keys) {
            let name = WireTypeGenerator.camel(key)
            #expect(name != nil && name == WireKeys.camel(key), "\(key): \(name ?? "none") against \(WireKeys.camel(key) ?? "none")")
            #expect(name.map(WireKeys.snake) == key)
        }
    }
}
