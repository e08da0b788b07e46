import Foundation
import Testing

/// The layering the README promises, checked against the package as built.
@Suite struct ModuleGraphTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    struct Target {
        let name: String
        let targetDependencies: [String]
        let productDependencies: [String]
    }

    /// The root manifest as SwiftPM reads it (`swift package dump-package`: no dependency
    /// resolution, so it is fast and needs no network or build directory).
    static func describe() throws -> [String: Target] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        // Its own scratch path: the default one is locked by the `swift test` running us.
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("rescind-dump-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        process.arguments = ["swift", "package", "--scratch-path", scratch.path, "dump-package"]
        process.currentDirectoryURL = root
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let manifest = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let targets = try #require(manifest["targets"] as? [[String: Any]])
        return Dictionary(uniqueKeysWithValues: targets.map { target in
            let name = target["name"] as? String ?? ""
            var byName: [String] = []
            var products: [String] = []
            for dependency in target["dependencies"] as? [[String: Any]] ?? [] {
                if let entry = (dependency["byName"] ?? dependency["target"]) as? [Any], let dependencyName = entry.first as? String {
                    byName.append(dependencyName)
                } else if let entry = dependency["product"] as? [Any], let product = entry.first as? String {
                    products.append(product)
                }
            }
            return (name, Target(name: name, targetDependencies: byName, productDependencies: products))
        })
    }

    /// Every target and product a target reaches, directly or not.
    static func closure(of name: String, in targets: [String: Target]) -> (targets: Set<String>, products: Set<String>) {
        var seen: Set<String> = []
        var products: Set<String> = []
        var stack = [name]
        while let next = stack.popLast() {
            guard seen.insert(next).inserted, let target = targets[next] else { continue }
            stack += target.targetDependencies
            products.formUnion(target.productDependencies)
        }
        return (seen, products)
    }

    /// The agent is a client: no database driver and no HTTP server. (It does link
    /// AsyncHTTPClient, through RescindClient: URLSession on Linux cost it 16× the CPU per byte.)
    @Test func theDeviceAgentNeverLinksLibPQOrTheHTTPServer() throws {
        let targets = try Self.describe()
        for agent in ["DeviceAgent", "DeviceAgentMain"] {
            let (reached, products) = Self.closure(of: agent, in: targets)
            #expect(reached.contains("RescindKafka") && reached.contains("RescindCrypto"), "\(agent) graph was not read")
            #expect(reached.isDisjoint(with: ["CLibPQ", "RescindPostgres", "GrantService", "AuditService"]), "\(agent): \(reached)")
            #expect(products.isDisjoint(with: ["Hummingbird", "HummingbirdCore", "HummingbirdRouter"]), "\(agent): \(products)")
        }
    }

    @Test func eachCLibraryIsWrappedByExactlyOneModule() throws {
        let targets = try Self.describe()
        let wrappers: [String: String] = [
            "CSodium": "RescindCrypto", "CLibCrypto": "RescindCrypto", "CRdKafka": "RescindKafka", "CLibPQ": "RescindPostgres",
        ]
        for (library, wrapper) in wrappers {
            let users = targets.values.filter { $0.targetDependencies.contains(library) }.map(\.name)
            #expect(users == [wrapper], "\(library) is used directly by \(users)")
        }
    }
}
