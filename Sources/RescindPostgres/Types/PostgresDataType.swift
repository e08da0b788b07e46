/// A PostgreSQL type, identified by its OID (`pg_type.oid`).
///
/// Parameters are sent with their type OID and in binary format, so a value's Swift type
/// decides its SQL type; results report each column's OID, which decoding checks.
public struct PostgresDataType: Hashable, Sendable, CustomStringConvertible {
    public let oid: UInt32

    public init(oid: UInt32) { self.oid = oid }

    public static let bool = PostgresDataType(oid: 16)
    public static let bytea = PostgresDataType(oid: 17)
    public static let name = PostgresDataType(oid: 19)
    public static let int8 = PostgresDataType(oid: 20)
    public static let int2 = PostgresDataType(oid: 21)
    public static let int4 = PostgresDataType(oid: 23)
    public static let text = PostgresDataType(oid: 25)
    public static let json = PostgresDataType(oid: 114)
    public static let float4 = PostgresDataType(oid: 700)
    public static let float8 = PostgresDataType(oid: 701)
    public static let unknown = PostgresDataType(oid: 705)
    public static let bpchar = PostgresDataType(oid: 1042)
    public static let varchar = PostgresDataType(oid: 1043)
    public static let timestamp = PostgresDataType(oid: 1114)
    public static let timestamptz = PostgresDataType(oid: 1184)
    public static let uuid = PostgresDataType(oid: 2950)
    public static let jsonb = PostgresDataType(oid: 3802)
    public static let textArray = PostgresDataType(oid: 1009)
    public static let int8Array = PostgresDataType(oid: 1016)
    public static let uuidArray = PostgresDataType(oid: 2951)
    public static let byteaArray = PostgresDataType(oid: 1001)

    static let knownNames: [UInt32: String] = [
        16: "bool", 17: "bytea", 19: "name", 20: "int8", 21: "int2", 23: "int4", 25: "text",
        114: "json", 700: "float4", 701: "float8", 705: "unknown", 1042: "bpchar", 1043: "varchar",
        1114: "timestamp", 1184: "timestamptz", 2950: "uuid", 3802: "jsonb", 1009: "text[]", 1016: "int8[]",
        2951: "uuid[]", 1001: "bytea[]",
    ]

    /// Whether this is one of the built-in types listed above (others: enums, domains, arrays, …).
    var isKnown: Bool { Self.knownNames[oid] != nil }

    /// Types whose binary form is plain UTF-8 text.
    var isTextual: Bool { [Self.text, .varchar, .bpchar, .name, .unknown].contains(self) }

    public var description: String { Self.knownNames[oid] ?? "type oid \(oid)" }
}
