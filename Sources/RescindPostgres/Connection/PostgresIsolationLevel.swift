/// Transaction isolation level (`BEGIN ISOLATION LEVEL …`); the server default is READ COMMITTED.
public enum PostgresIsolationLevel: String, Sendable {
    case readCommitted = "READ COMMITTED"
    case repeatableRead = "REPEATABLE READ"
    /// Conflicting transactions fail with SQLSTATE 40001 (`isSerializationFailure`): retry them.
    case serializable = "SERIALIZABLE"
}
