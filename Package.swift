// swift-tools-version:6.1
import PackageDescription

// Layers, bottom up:
//   C<Lib>            one system-library target per C library (pkg-config + apt provider)
//   Rescind<Concern>  the only Swift modules that import a C module; no C type in their API
//   services/agent    built on the concern modules (see README, "Architecture")
// The device agent's graph must never contain CLibPQ or the HTTP server stack.

let package = Package(
    name: "Rescind",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "RescindCrypto", targets: ["RescindCrypto"]),
        .library(name: "RescindKafka", targets: ["RescindKafka"]),
        .library(name: "RescindPostgres", targets: ["RescindPostgres"]),
        .executable(name: "rescind-devbroker", targets: ["RescindDevBroker"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    ],
    targets: [
        // MARK: C libraries, each wrapped exactly once

        .systemLibrary(
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]
        ),
        .systemLibrary(
            name: "CLibCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        .systemLibrary(
            name: "CRdKafka",
            pkgConfig: "rdkafka",
            providers: [.apt(["librdkafka-dev"])]
        ),
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),

        // MARK: One module per concern

        .target(
            name: "RescindCrypto",
            dependencies: ["CSodium", "CLibCrypto"]
        ),
        .target(
            name: "RescindKafka",
            dependencies: [
                "CRdKafka",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "RescindPostgres",
            dependencies: [
                "CLibPQ",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // MARK: Executables

        .executableTarget(
            name: "RescindDevBroker",
            dependencies: [
                "RescindKafka",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // MARK: Tests

        .testTarget(name: "RescindCryptoTests", dependencies: ["RescindCrypto"]),
        .testTarget(name: "RescindKafkaTests", dependencies: ["RescindKafka"]),
        .testTarget(name: "RescindPostgresTests", dependencies: ["RescindPostgres"]),
    ]
)
