import RescindPostgres
import RescindProtocol

/// Stored as its raw text (`self` / `ecdh`), which the schema's CHECK constrains.
extension KeyWrapping: PostgresEncodable, PostgresDecodable {}
