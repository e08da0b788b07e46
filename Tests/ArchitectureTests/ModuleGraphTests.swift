import Foundation
import Testing

/// The layering docs/architecture.md promises, checked against the package as built.
@Suite struct ModuleGraphTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    struct Target {
        let name: String
        /// `regular`, `executable`, `test`, `system`…
        var type = "regular"
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
            return (
                name,
                Target(
                    name: name, type: target["type"] as? String ?? "regular", targetDependencies: byName,
                    productDependencies: products)
            )
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
            "CMalloc": "RescindLifecycle",
        ]
        for (library, wrapper) in wrappers {
            let users = targets.values.filter { $0.targetDependencies.contains(library) }.map(\.name)
            #expect(users == [wrapper], "\(library) is used directly by \(users)")
        }
    }

    /// swift-syntax runs in the compiler, never in a process of ours: only the macro plugin
    /// depends on it, and every other target reaches it only through the plugin. (A test target
    /// depending on the plugin would make SwiftPM build every test for the host, where the
    /// executables' modules cannot be imported.)
    @Test func onlyTheMacroPluginDependsOnSwiftSyntax() throws {
        let targets = try Self.describe()
        let users = targets.values.filter { $0.productDependencies.contains { $0.hasPrefix("SwiftSyntax") || $0 == "SwiftCompilerPlugin" } }
        #expect(Set(users.map(\.name)) == ["RescindMacrosPlugin"], "\(users.map(\.name).sorted())")
        #expect(targets["RescindMacrosPlugin"]?.type == "macro", "\(String(describing: targets["RescindMacrosPlugin"]?.type))")
    }

    // MARK: Two layers: the product and the dev kit

    /// The dev kit: development cluster, launcher, test databases, fault plans, and the
    /// executables built on it. `RescindTestSupport` is the tests' kit (it may use the dev kit).
    static let devKit: Set<String> = ["RescindDevKit", "RescindDev", "RescindDevBroker", "RescindBench", "RescindHostile", "RescindFuzz"]
    static let testKit: Set<String> = ["RescindTestSupport"]

    /// The user's `rescind` links the client side only: no agent, no database or Kafka driver,
    /// no service, no dev kit.
    @Test func theUsersCLILinksOnlyTheClientSide() throws {
        let targets = try Self.describe()
        let (reached, products) = Self.closure(of: "RescindCLI", in: targets)
        #expect(reached.contains("RescindClient") && reached.contains("RescindCrypto"), "RescindCLI graph was not read")
        let forbidden: Set<String> = [
            "DeviceAgent", "RescindPostgres", "RescindKafka", "CLibPQ", "CRdKafka", "GrantService", "AuditService",
            "RescindServiceSupport",
        ]
        #expect(reached.isDisjoint(with: forbidden.union(Self.devKit).union(Self.testKit)), "RescindCLI: \(reached.sorted())")
        #expect(products.isDisjoint(with: ["Hummingbird", "HummingbirdCore", "GRDB"]), "RescindCLI: \(products.sorted())")
    }

    /// No product target reaches the dev kit or the test kit, directly or not.
    @Test func theProductNeverLinksTheDevKit() throws {
        let targets = try Self.describe()
        let product = targets.values.filter {
            $0.type != "test" && $0.type != "system" && !Self.devKit.contains($0.name) && !Self.testKit.contains($0.name)
        }
        #expect(product.contains { $0.name == "RescindCLI" } && product.contains { $0.name == "RescindAdmin" })
        for target in product {
            let (reached, _) = Self.closure(of: target.name, in: targets)
            #expect(reached.isDisjoint(with: Self.devKit.union(Self.testKit)), "\(target.name) reaches \(reached.intersection(Self.devKit.union(Self.testKit)).sorted())")
        }
    }

    /// Only dev-kit and test targets depend on the dev kit.
    @Test func onlyTheDevKitAndTestsDependOnTheDevKit() throws {
        let targets = try Self.describe()
        let dependents = targets.values.filter { $0.targetDependencies.contains("RescindDevKit") }
        #expect(!dependents.isEmpty, "no target depends on RescindDevKit: graph not read")
        for target in dependents {
            #expect(
                target.type == "test" || Self.devKit.contains(target.name) || Self.testKit.contains(target.name),
                "\(target.name) is a product target and depends on the dev kit")
        }
    }

    /// The mock cluster's wrapper is RescindKafka's SPI for the dev kit: no product source imports it.
    @Test func noProductSourceImportsTheDevKitSPI() throws {
        let targets = try Self.describe()
        let sources = Self.root.appendingPathComponent("Sources")
        for name in targets.keys where !Self.devKit.contains(name) {
            let directory = sources.appendingPathComponent(name)
            guard let files = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil) else { continue }
            for case let file as URL in files where file.pathExtension == "swift" {
                let text = try String(contentsOf: file, encoding: .utf8)
                #expect(!text.contains("@_spi(DevKit) import"), "\(name)/\(file.lastPathComponent) imports the dev kit's SPI")
            }
        }
    }

    /// The dev kit's targets live apart from the product's, under `Sources/DevKit/`.
    @Test func theDevKitLivesInItsOwnFolder() throws {
        let targets = try Self.describe()
        #expect(targets.keys.contains("RescindFuzz"), "graph not read")
        let folders = try FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent("Sources/DevKit").path)
        #expect(Set(folders) == Self.devKit, "\(folders.sorted())")
        let top = try FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent("Sources").path)
        #expect(Set(top).isDisjoint(with: Self.devKit), "dev-kit targets among the product's: \(top.sorted())")
    }

    /// One child-process launcher: only the dev kit's `ChildProcess` starts processes (and this
    /// suite, which has no Rescind dependency, for `swift package dump-package`), whichever call
    /// starts them: Foundation's `Process`, `posix_spawn`, `fork` or an `exec`.
    @Test func onlyTheDevKitsLauncherStartsProcesses() throws {
        let allowed = ["Sources/DevKit/RescindDevKit/Process/ChildProcess.swift", "Tests/ArchitectureTests/ModuleGraphTests.swift"]
        let starts = try Regex(#"Process\(\)|posix_spawnp?\(|\bv?fork\(\)|\bexec[lv]p?e?\("#)
        var starters: [String] = []
        var read = 0
        for folder in ["Sources", "Tests"] {
            let directory = Self.root.appendingPathComponent(folder)
            guard let files = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil) else { continue }
            for case let file as URL in files where file.pathExtension == "swift" {
                let relative = String(file.path.dropFirst(Self.root.path.count + 1))
                read += 1
                guard !allowed.contains(relative) else { continue }
                // Code only: comments may name the calls, and a test may be called `fork()`.
                let code = try String(contentsOf: file, encoding: .utf8).split(separator: "\n").filter {
                    let line = $0.trimmingCharacters(in: .whitespaces)
                    return !line.hasPrefix("//") && !line.contains("func fork(")
                }
                if code.contains(where: { $0.contains(starts) }) { starters.append(relative) }
            }
        }
        #expect(read > 300, "only \(read) source files read")
        #expect(starters.isEmpty, "processes started outside the dev kit's launcher: \(starters)")
    }
}
