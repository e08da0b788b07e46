import Foundation

/// One migration file, `<digits>_<description>.sql`, e.g. `0001_init.sql`.
struct PostgresMigration: Sendable {
    /// The leading digits, e.g. `0001`; unique within a directory.
    let version: String
    /// The file name, e.g. `0001_init.sql`.
    let fileName: String
    /// The file's exact bytes (checksummed) and the same as text (executed).
    let contents: [UInt8]
    let sql: String

    /// The directory's `*.sql` files in lexical (byte-wise) order of file name.
    /// - Throws: `.invalidMigration` for an unreadable directory or file, a name without a
    ///   numeric version prefix, a duplicate version, or a file that is not UTF-8.
    static func load(from directory: URL) throws -> [PostgresMigration] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        } catch {
            throw PostgresError(code: .invalidMigration, message: "cannot list migrations directory \(directory.path)")
        }
        let files = names.filter { $0.hasSuffix(".sql") }.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        var versions: Set<String> = []
        return try files.map { fileName in
            let version = String(fileName.prefix { $0.isASCII && $0.isNumber })
            guard !version.isEmpty, fileName.dropFirst(version.count).first == "_" else {
                throw PostgresError(
                    code: .invalidMigration, message: "migration \(fileName) must be named <digits>_<description>.sql")
            }
            guard versions.insert(version).inserted else {
                throw PostgresError(code: .invalidMigration, message: "migration \(fileName) repeats version \(version)")
            }
            let url = directory.appendingPathComponent(fileName)
            guard let data = FileManager.default.contents(atPath: url.path) else {
                throw PostgresError(code: .invalidMigration, message: "cannot read migration \(fileName)")
            }
            let contents = Array(data)
            guard let sql = String(validating: contents, as: UTF8.self) else {
                throw PostgresError(code: .invalidMigration, message: "migration \(fileName) is not valid UTF-8")
            }
            return PostgresMigration(version: version, fileName: fileName, contents: contents, sql: sql)
        }
    }
}
