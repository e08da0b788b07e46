import Foundation

/// A one-dimensional array parameter (`uuid[]`, `text[]`, `int8[]`, `bytea[]`), for
/// `WHERE id = ANY(\(PostgresArray(ids)))`: one bind instead of one per element.
public struct PostgresArray<Element: PostgresArrayElement>: PostgresEncodable {
    public var elements: [Element]

    public init(_ elements: [Element]) {
        self.elements = elements
    }

    public static var postgresType: PostgresDataType { Element.postgresArrayType }

    /// `array_send`: dimensions, null flag, element type, then each element with its length.
    public func encode(into buffer: inout [UInt8]) {
        func int32(_ value: Int32) { withUnsafeBytes(of: value.bigEndian) { buffer.append(contentsOf: $0) } }
        int32(1)
        int32(0)
        withUnsafeBytes(of: Element.postgresType.oid.bigEndian) { buffer.append(contentsOf: $0) }
        int32(Int32(elements.count))
        int32(1)
        var element: [UInt8] = []
        for value in elements {
            element.removeAll(keepingCapacity: true)
            value.encode(into: &element)
            int32(Int32(element.count))
            buffer.append(contentsOf: element)
        }
    }
}

/// An element type with a built-in PostgreSQL array type.
public protocol PostgresArrayElement: PostgresEncodable {
    static var postgresArrayType: PostgresDataType { get }
}

extension UUID: PostgresArrayElement {
    public static var postgresArrayType: PostgresDataType { .uuidArray }
}

extension String: PostgresArrayElement {
    public static var postgresArrayType: PostgresDataType { .textArray }
}

extension Int64: PostgresArrayElement {
    public static var postgresArrayType: PostgresDataType { .int8Array }
}

extension Data: PostgresArrayElement {
    public static var postgresArrayType: PostgresDataType { .byteaArray }
}
