import Foundation

/// A 0700 directory under the system's temporary directory, removed by `remove()`.
struct TemporaryDirectory {
    let path: String

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("rescind-agent-test-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    /// A path inside (not created).
    func file(_ name: String) -> String { path + "/" + name }

    /// Writes `data` with `permissions`.
    @discardableResult
    func write(_ name: String, _ data: Data, permissions: Int = 0o600) throws -> String {
        let target = file(name)
        try data.write(to: URL(fileURLWithPath: target))
        try FileManager.default.setAttributes([.posixPermissions: permissions], ofItemAtPath: target)
        return target
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// Runs `body` with a fresh directory and always removes it.
    static func with<Result>(_ body: (TemporaryDirectory) async throws -> Result) async throws -> Result {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        return try await body(directory)
    }

    /// Every byte of every regular file below `path` (database, journal, keystore, …).
    func allFileBytes() throws -> [(name: String, bytes: [UInt8])] {
        guard let enumerator = FileManager.default.enumerator(atPath: path) else { return [] }
        var result: [(String, [UInt8])] = []
        for case let name as String in enumerator {
            var isDirectory: ObjCBool = false
            let full = file(name)
            if FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory), !isDirectory.boolValue,
                let data = FileManager.default.contents(atPath: full)
            {
                result.append((name, [UInt8](data)))
            }
        }
        return result
    }
}

extension Array where Element == UInt8 {
    /// Whether `needle` occurs anywhere in these bytes.
    func contains(bytes needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= count else { return false }
        let first = needle[0]
        var index = 0
        while index <= count - needle.count {
            if self[index] == first, Array(self[index..<(index + needle.count)]) == needle { return true }
            index += 1
        }
        return false
    }
}
