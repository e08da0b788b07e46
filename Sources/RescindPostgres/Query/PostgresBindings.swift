/// The parameter values of a statement (`$1`, `$2`, …), already encoded in binary format.
///
/// Values are encoded when appended, into one contiguous buffer, so a query is cheap to pass
/// between tasks. `description` shows the types only, never the values.
public struct PostgresBindings: Sendable, CustomStringConvertible {
    /// Type OID of each parameter.
    private(set) var types: [UInt32] = []
    /// The encoded bytes of every non-NULL parameter, back to back.
    private(set) var storage: [UInt8] = []
    /// Where each parameter's bytes are in `storage`; `nil` is SQL NULL.
    private(set) var ranges: [Range<Int>?] = []

    public init() {}

    /// The number of parameters.
    public var count: Int { types.count }

    /// Appends the next parameter (`$\(count + 1)`).
    public mutating func append<Value: PostgresEncodable>(_ value: Value) {
        types.append(Value.postgresType.oid)
        guard !value.isPostgresNull else {
            ranges.append(nil)
            return
        }
        let start = storage.count
        value.encode(into: &storage)
        ranges.append(start..<storage.count)
    }

    public var description: String {
        "[" + types.map { PostgresDataType(oid: $0).description }.joined(separator: ", ") + "]"
    }
}
