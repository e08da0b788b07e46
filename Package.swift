// swift-tools-version:6.2
// 6.2: the oldest toolchain every dependency accepts (deploy/Dockerfile builds with it).
import CompilerPluginSupport
import PackageDescription

// Layers, bottom up:
//   C<Lib>            one system-library target per C library (pkg-config + apt provider)
//   Rescind<Concern>  the only Swift modules that import a C module; no C type in their API
//   services/agent    built on the concern modules (see docs/architecture.md)
// The device agent's graph must never contain CLibPQ or the HTTP server stack.
//
// Two layers (docs/architecture.md): the product (the modules above, the services, the agent,
// the user's `rescind` and the operator's `rescind-admin`) and the dev kit (`RescindDevKit`:
// the development Kafka cluster, the one child-process launcher, test databases, fault plans;
// `rescind-dev`: demo and stack; `rescind-bench`, `rescind-hostile`, `rescind-devbroker`).
// The product never links the dev kit; only dev-kit executables and tests do (ArchitectureTests).

let package = Package(
    name: "Rescind",
    platforms: [.macOS(.v14)],
    products: [
        // For outside clients: the client library and the protocol and crypto types its API
        // shows. The drivers, the services and the dev kit are this package's own.
        .library(name: "RescindClient", targets: ["RescindClient"]),
        .library(name: "RescindProtocol", targets: ["RescindProtocol"]),
        .library(name: "RescindCrypto", targets: ["RescindCrypto"]),
        // The product.
        .executable(name: "rescind-grant-service", targets: ["GrantServiceMain"]),
        .executable(name: "rescind-audit-service", targets: ["AuditServiceMain"]),
        .executable(name: "rescind-agent", targets: ["DeviceAgentMain"]),
        .executable(name: "rescind", targets: ["RescindCLI"]),
        .executable(name: "rescind-admin", targets: ["RescindAdmin"]),
        // The dev kit.
        .executable(name: "rescind-dev", targets: ["RescindDev"]),
        .executable(name: "rescind-devbroker", targets: ["RescindDevBroker"]),
        .executable(name: "rescind-bench", targets: ["RescindBench"]),
        .executable(name: "rescind-hostile", targets: ["RescindHostile"]),
        .executable(name: "rescind-fuzz", targets: ["RescindFuzz"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        // swift-configuration support is not used: configuration comes from the environment.
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: ["FullFoundation"]),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        .package(url: "https://github.com/swiftlang/swift-syntax.git", "600.0.1"..<"604.0.0"),
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
        // glibc's <malloc.h> (mallopt), for `MemoryAllocator`; part of libc, nothing to install.
        .systemLibrary(name: "CMalloc"),

        // MARK: One module per concern

        // `@MemberwiseInit`: a struct's memberwise `init` at its own access level, so a public type
        // does not write each property out twice. The plugin runs in the compiler, never at run time.
        .macro(
            name: "RescindMacrosPlugin",
            dependencies: [
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
            ]),
        .target(name: "RescindMacros", dependencies: ["RescindMacrosPlugin"]),

        .target(
            name: "RescindCrypto",
            dependencies: ["CSodium", "CLibCrypto"]
        ),

        // The metadata keys of every structured log (`LogKey`), in one place, and how every executable
        // writes its log lines (`RescindLogging`: text or JSON lines); swift-log only.
        .target(name: "RescindObservability", dependencies: [.product(name: "Logging", package: "swift-log")]),
        // W3C Trace Context, a tracer for swift-distributed-tracing, and a bounded OTLP/HTTP exporter.
        .target(
            name: "RescindTracing",
            dependencies: [
                "RescindConfiguration",
                "RescindObservability",
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]),

        .target(
            name: "RescindKafka",
            dependencies: [
                "CRdKafka",
                "RescindMacros",
                "RescindObservability",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        .target(
            name: "RescindPostgres",
            dependencies: [
                "CLibPQ",
                "RescindMacros",
                "RescindObservability",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // Typed `RESCIND_*` environment settings, read the same way by every executable.
        .target(name: "RescindConfiguration", dependencies: ["RescindMacros"]),

        // A process's bounded graceful shutdown (`ShutdownDeadline`) and its allocator settings
        // (`MemoryAllocator`): the services' and the agent's.
        .target(
            name: "RescindLifecycle",
            dependencies: [
                .target(name: "CMalloc", condition: .when(platforms: [.linux])),
                "RescindMacros",
                "RescindObservability",
                "RescindTracing",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),

        // TLS on every HTTP hop: a server's certificate and key, a client's trusted CA and its
        // plain-HTTP policy, each read from `RESCIND_*` files and refused with the variable named.
        .target(
            name: "RescindTLS",
            dependencies: [
                "RescindConfiguration",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),

        // Messages on the topics, their signed envelope, and the HTTP API's
        // request/response types: shared by the services, the agent and the CLI.
        // Its HTTP request and response types are generated at build time from the services'
        // OpenAPI documents (WireTypesPlugin), so a field is stated once, in the contract.
        .target(
            name: "RescindProtocol",
            dependencies: ["RescindCrypto", "RescindMacros"],
            plugins: ["WireTypesPlugin"]
        ),
        .plugin(name: "WireTypesPlugin", capability: .buildTool(), dependencies: ["RescindWireTypes"]),
        // The plugin's generator: runs on the build machine only, never linked into a product.
        .executableTarget(
            name: "RescindWireTypes",
            dependencies: [.product(name: "Yams", package: "Yams")],
            path: "Sources/BuildTools/RescindWireTypes"
        ),

        // The grant service's HTTP API as a client (AsyncHTTPClient's shared pool, see HTTPTransport),
        // the owner-side flows built on it, and a device's encrypted keystore (the agent's and the
        // `rescind` CLI's profile: one format).
        .target(
            name: "RescindClient",
            dependencies: [
                "RescindMacros",
                "RescindConfiguration",
                "RescindCrypto",
                "RescindObservability",
                "RescindProtocol",
                "RescindTLS",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),

        // MARK: Services

        // What every Rescind service shares: the JSON error type and middleware, signing key files,
        // the database pool and the NOTIFY-driven outbox drain loop, process start-up.
        .target(
            name: "RescindServiceSupport",
            dependencies: [
                "RescindConfiguration",
                "RescindKafka",
                "RescindObservability",
                "RescindTracing",
                "RescindLifecycle",
                "RescindCrypto",
                "RescindPostgres",
                "RescindProtocol",
                "RescindTLS",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),

        .target(
            name: "GrantService",
            dependencies: [
                "RescindObservability",
                "RescindTracing",
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                "RescindServiceSupport",
                "RescindTLS",
                "RescindConfiguration",
                "RescindCrypto",
                "RescindKafka",
                "RescindPostgres",
                "RescindProtocol",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            resources: [.copy("Resources/openapi.yaml")]
        ),

        .target(
            name: "AuditService",
            dependencies: [
                "RescindMacros",
                "RescindObservability",
                "RescindTracing",
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                "RescindServiceSupport",
                "RescindTLS",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                "RescindConfiguration",
                "RescindCrypto",
                "RescindKafka",
                "RescindPostgres",
                "RescindProtocol",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            resources: [.copy("Resources/monitor.html"), .copy("Resources/monitor.js"), .copy("Resources/openapi.yaml")]
        ),

        // Runs on devices: must never depend on CLibPQ/RescindPostgres or the HTTP server stack.
        .target(
            name: "DeviceAgent",
            dependencies: [
                "RescindMacros",
                "RescindObservability",
                "RescindTracing",
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                "RescindLifecycle",
                "RescindClient",
                "RescindTLS",
                "RescindConfiguration",
                "RescindCrypto",
                "RescindKafka",
                "RescindProtocol",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),

        // MARK: Executables

        // A user's client: only the client side (never the agent, PostgreSQL, Kafka or the dev kit).
        .executableTarget(
            name: "RescindCLI",
            dependencies: [
                "RescindClient", "RescindConfiguration", "RescindCrypto", "RescindObservability", "RescindProtocol", "RescindTLS",
                "RescindTracing",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The operator's tool: migrations, topics, key files.
        .executableTarget(
            name: "RescindAdmin",
            dependencies: [
                "RescindConfiguration", "RescindCrypto", "RescindKafka", "RescindObservability", "RescindPostgres", "RescindProtocol",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "AuditServiceMain",
            dependencies: ["AuditService", "RescindServiceSupport"]
        ),
        .executableTarget(
            name: "DeviceAgentMain",
            dependencies: [
                "DeviceAgent", "RescindConfiguration", "RescindLifecycle", "RescindObservability", "RescindTracing",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "GrantServiceMain",
            dependencies: ["GrantService", "RescindServiceSupport"]
        ),

        // MARK: Dev kit (never linked by the product)

        // The development Kafka cluster (over RescindKafka's mock-cluster wrapper), the one
        // child-process launcher, the test database default, the agent's fault plans.
        .target(
            name: "RescindDevKit",
            dependencies: [
                "DeviceAgent", "RescindClient", "RescindCrypto", "RescindKafka", "RescindObservability", "RescindPostgres",
                "RescindProtocol", "RescindTLS", .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/DevKit/RescindDevKit"
        ),
        // `rescind-dev demo | stack`: the end-to-end demo on local servers, the local stack.
        .executableTarget(
            name: "RescindDev",
            dependencies: [
                "RescindDevKit", "DeviceAgent", "RescindClient", "RescindConfiguration", "RescindCrypto", "RescindKafka",
                "RescindObservability", "RescindPostgres", "RescindProtocol", "RescindTLS", "RescindTracing",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            path: "Sources/DevKit/RescindDev"
        ),
        .executableTarget(
            name: "RescindDevBroker",
            dependencies: [
                "RescindDevKit", "RescindKafka", "RescindObservability",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/DevKit/RescindDevBroker"
        ),

        // Measures every hot path against this machine's own limit (docs/benchmarks.md); a command, not a test.
        .executableTarget(
            name: "RescindBench",
            dependencies: [
                "RescindDevKit", "DeviceAgent", "RescindClient", "RescindCrypto", "RescindKafka", "RescindObservability",
                "RescindPostgres", "RescindProtocol", "RescindTLS", "RescindTracing", .product(name: "Logging", package: "swift-log"),
                // The tracing section's stand-in collector.
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            path: "Sources/DevKit/RescindBench"
        ),

        // The long run of the hostile-input property (docs/reliability.md): generated hostile envelopes
        // through an in-process audit service; a command, not a test. Built on the test kit.
        .executableTarget(
            name: "RescindHostile",
            dependencies: [
                "AuditService", "DeviceAgent", "RescindClient", "RescindDevKit", "RescindTestSupport", "RescindCrypto",
                "RescindKafka", "RescindObservability", "RescindPostgres", "RescindProtocol", "RescindTLS",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/DevKit/RescindHostile"
        ),

        // libFuzzer targets for the binary record bodies and the signed envelope (docs/reliability.md):
        // scripts/fuzz.sh builds it with -sanitize=fuzzer in .build-fuzz; a normal build replays inputs.
        .executableTarget(name: "RescindFuzz", dependencies: ["RescindObservability", "RescindProtocol"], path: "Sources/DevKit/RescindFuzz"),

        // MARK: Tests

        // Real services for integration tests: a grant service on its own schema and
        // Kafka cluster, and helpers to read what it published.
        .target(
            name: "RescindTestSupport",
            dependencies: [
                "AuditService", "GrantService", "RescindClient", "RescindCrypto", "RescindDevKit", "RescindKafka",
                "RescindPostgres", "RescindProtocol", "RescindTLS", .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                // The recording proxy of the OpenAPI contract tests, and the documents' YAML.
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/RescindTestSupport"
        ),

        // Runs the executables as separate processes on the local stack.
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "RescindClient", "RescindCrypto", "RescindDevKit", "RescindObservability", "RescindPostgres", "RescindProtocol", "RescindTestSupport",
                "RescindTLS",
            ]),
        // Reads the manifest, sources and deploy/: checks layering and deployment, needs no server.
        .testTarget(name: "ArchitectureTests", dependencies: [.product(name: "Yams", package: "Yams")]),
        .testTarget(name: "RescindCryptoTests", dependencies: ["RescindCrypto"]),
        .testTarget(name: "RescindKafkaTests", dependencies: ["RescindKafka", "RescindDevKit", "RescindTracing"]),
        .testTarget(name: "RescindPostgresTests", dependencies: ["RescindPostgres", "RescindDevKit"]),
        // With the generator of its HTTP types (RescindWireTypes), tested in process.
        .testTarget(
            name: "RescindProtocolTests",
            dependencies: ["RescindProtocol", "RescindCrypto", "RescindMacros", "RescindWireTypes", .product(name: "Yams", package: "Yams")]),
        // The client library alone: the key history verifier's rules, QR codes, invitations' encoding
        // and checks, its transport against a Hummingbird app in process (no server of ours; the test
        // kit for its shared expectations).
        .testTarget(
            name: "RescindClientTests",
            dependencies: [
                "RescindClient", "RescindCrypto", "RescindProtocol", "RescindDevKit", "RescindTLS", "RescindTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ]),
        // What the services share, on a Hummingbird app in process (no database, no broker).
        .testTarget(
            name: "RescindServiceSupportTests",
            dependencies: [
                "RescindServiceSupport", .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ]),
        // Replays the committed fuzz corpus (Fuzz/corpus) through the fuzz targets, no sanitizer.
        .testTarget(name: "RescindFuzzTests", dependencies: ["RescindFuzz", "RescindProtocol"]),
        .testTarget(name: "RescindConfigurationTests", dependencies: ["RescindConfiguration"]),
        .testTarget(name: "RescindObservabilityTests", dependencies: ["RescindObservability"]),
        // The tracer and the exporter against the test kit's collector on loopback; no server of ours.
        .testTarget(name: "RescindTracingTests", dependencies: ["RescindTracing", "RescindTestSupport"]),
        // The dev kit's own promises (the child-process launcher's timeout and cancellation), no server.
        .testTarget(name: "RescindDevKitTests", dependencies: ["RescindDevKit"]),
        // rescind-bench's fleet model: its arithmetic and seeded simulation, no server.
        .testTarget(name: "RescindBenchTests", dependencies: ["RescindBench", "RescindDevKit"]),
        .testTarget(name: "RescindTLSTests", dependencies: ["RescindTLS", "RescindDevKit"]),
        .testTarget(
            name: "AuditServiceTests",
            dependencies: [
                "RescindTLS", "RescindConfiguration", "RescindObservability",
                "AuditService", "RescindDevKit", "RescindTestSupport", "RescindCrypto", "RescindKafka", "RescindPostgres", "RescindProtocol",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "DeviceAgentTests",
            dependencies: [
                "RescindTLS",
                "DeviceAgent", "RescindDevKit", "RescindTestSupport", "RescindClient", "RescindCrypto", "RescindKafka", "RescindProtocol",
                "RescindLifecycle",
                // The malicious-server tests write to the grant service's schema directly.
                "RescindPostgres",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "GrantServiceTests",
            dependencies: [
                "RescindTLS",
                "GrantService", "RescindDevKit", "RescindTestSupport", "RescindClient", "RescindCrypto", "RescindKafka", "RescindPostgres",
                "RescindProtocol", "RescindServiceSupport", "RescindObservability", .product(name: "Logging", package: "swift-log"),
                // Router-level tests (`app.test(.router)`) that need no database or broker.
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ]
        ),
    ]
)
