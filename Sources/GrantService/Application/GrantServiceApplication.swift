import Foundation
import Hummingbird
import Logging
import Prometheus
import RescindCrypto
import RescindKafka
import RescindObservability
import RescindPostgres
import RescindProtocol
import ServiceLifecycle
import RescindServiceSupport

/// Builds the grant service: the HTTP API, the outbox relay and the janitor,
/// sharing one connection pool and one Kafka producer.
public enum GrantServiceApplication {
    /// Opens the pool and producer, applies migrations if configured, and returns the
    /// application ready to `run()` (or `runService()`), which stops gracefully on SIGTERM/SIGINT.
    /// - Parameters:
    ///   - onServerRunning: told the bound port (useful with port 0).
    ///   - onMetricsServerRunning: told the metrics listener's bound port, when it has one
    ///     (`configuration.http.metricsPort`).
    public static func build(
        configuration: GrantServiceConfiguration,
        logger: Logger,
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in },
        onMetricsServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) async throws -> some ApplicationProtocol {
        // Bootstraps swift-metrics before anything records a metric; done lazily by the
        // first scrape instead, every metric recorded until then would be lost.
        let metrics = GrantMetrics()
        // First, so that an unusable certificate stops the service before it touches anything.
        let server = try ServiceServer.builder(tls: configuration.http.tls)
        let metricsServer = try configuration.http.metricsPort.map {
            try MetricsListener.server(
                host: configuration.http.host, port: $0, tls: configuration.http.tls, registry: metrics.registry,
                serverName: "rescind-grant-service", logger: logger, onServerRunning: onMetricsServerRunning)
        }
        let signingKey = try SigningKeyFile.load(
            path: configuration.signingKeyFile, createIfMissing: configuration.createSigningKeyIfMissing)
        let opened = try await ServiceDatabase.open(configuration.database, applicationName: "rescind-grant-service", logger: logger)
        let (database, pool) = (opened.configuration, opened.pool)
        // The relay, its only user, queues a whole claimed batch and then waits for every report:
        // a linger would only delay the batch (and every command in it) by that much.
        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(
                bootstrapServers: configuration.kafka.bootstrapServers, clientID: "rescind-grant-service", linger: .zero,
                additionalProperties: configuration.kafka.producerProperties),
            logger: logger)

        let topicWatch = try configuration.kafka.checkTopics ? Self.topicWatch(configuration.kafka, logger: logger) : nil
        if let reason = await topicWatch?.notReadyReason() {
            logger.warning("not ready until the topics exist", metadata: [LogKey.reason: "\(reason)"])
        }

        let outbox = OutboxWriter(signingKey: signingKey, topicPrefix: configuration.kafka.topicPrefix)
        let identities = IdentityStore(pool: pool, outbox: outbox, securityDelay: configuration.lifetimes.securityDelay)
        let families = FamilyMemberStore(pool: pool, outbox: outbox)
        let router = buildRouter(
            configuration: configuration, pool: pool, identities: identities, families: families,
            records: RecordStore(pool: pool),
            revocations: RevocationStore(
                pool: pool, families: families, outbox: outbox, stagingLifetime: configuration.lifetimes.staging),
            serviceKey: signingKey.publicKey, topicWatch: topicWatch, metrics: metrics)

        var app = Application(
            router: router,
            server: server,
            configuration: .init(
                address: .hostname(configuration.http.host, port: configuration.http.port),
                serverName: "rescind-grant-service"),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? 0) },
            logger: logger)
        // First of the services, so that it stops last: scrapes see the shutdown through.
        if let metricsServer { app.addServices(metricsServer) }
        let janitor = Janitor(
            pool: pool, families: families, outbox: outbox, retention: configuration.lifetimes.revokedGrantRetention,
            deviceCommandRetention: configuration.lifetimes.deviceCommandRetention,
            versions: RecordVersionStore(pool: pool, retention: configuration.lifetimes.recordVersionRetention), logger: logger)
        app.addServices(
            PoolService(pool: pool),
            OutboxRelay.grantOutbox(
                pool: pool, database: database, producer: producer, settings: configuration.outbox, metrics: metrics,
                logger: logger),
            PeriodicService(name: "janitor sweep", interval: configuration.lifetimes.janitorInterval, logger: logger) {
                try await janitor.sweep()
                try await GovernanceStore(pool: pool, families: families, delay: configuration.lifetimes.securityDelay).applyDue()
            },
            ReachabilityProbe.database(pool: pool, metrics: metrics.service, interval: configuration.probeInterval, logger: logger),
            ReachabilityProbe.broker(metrics: metrics.service, interval: configuration.probeInterval, logger: logger) {
                await producer.brokersAnswer()
            })
        return app
    }

    static func buildRouter(
        configuration: GrantServiceConfiguration, pool: PostgresConnectionPool, identities: IdentityStore,
        families: FamilyMemberStore, records: RecordStore, revocations: RevocationStore, serviceKey: Ed25519.PublicKey,
        topicWatch: KafkaTopicWatch? = nil, metrics: GrantMetrics = GrantMetrics()
    ) -> Router<GrantRequestContext> {
        let router = Router(context: GrantRequestContext.self)
        router.add(middleware: ServerTracingMiddleware())
        router.add(middleware: ErrorMiddleware())
        router.add(middleware: RuleViolationMiddleware())
        router.add(middleware: HTTPMetricsMiddleware(metrics.service))
        router.add(middleware: BodyLimitMiddleware(bytes: configuration.http.maxBodyBytes))
        OperationsController(
            pool: pool, serviceKey: serviceKey, metrics: metrics, topicWatch: topicWatch,
            servesMetrics: configuration.http.metricsPort == nil
        ).addRoutes(to: router)

        let limits = RateLimits(configuration.limits, metrics: metrics)
        let v1 = router.group("v1")
            .add(
                middleware: InFlightLimitMiddleware(
                    limit: configuration.limits.maxInFlight, changed: { metrics.requestsInFlight.set(to: Double($0)) },
                    shed: { metrics.requestsShed.increment() })
            )
            .add(middleware: RenewalAuthenticator(identities: identities, limits: limits))
            .add(middleware: AddressRateLimitMiddleware(limits: limits))
            .add(
                middleware: InFlightLimitMiddleware(
                    limit: configuration.anonymousInFlightBound,
                    counts: { request, context in
                        context.identity == nil && RateLimits.addressBudget(method: request.method, path: request.uri.path) != nil
                    },
                    shed: { metrics.requestsShed.increment() })
            )
        let syncStates = DeviceSyncStore(pool: pool)
        let checkIns = DeviceCheckIns(store: syncStates, metrics: metrics)
        let identity = IdentityController(
            identities: identities, syncStates: syncStates, lifetimes: configuration.lifetimes, limits: configuration.limits,
            metrics: metrics)
        identity.addPublicRoutes(to: v1)
        let governance = GovernanceStore(pool: pool, families: families, delay: configuration.lifetimes.securityDelay)
        RecoveryController(recoveries: RecoveryStore(pool: pool, outbox: families.outbox), governance: governance, lifetimes: configuration.lifetimes)
            .addRoutes(to: v1)
        let authenticated = v1.group().add(middleware: BearerAuthenticator(identities: identities))
            .add(middleware: DeviceRateLimitMiddleware(limits: limits))
        identity.addAuthenticatedRoutes(to: authenticated)
        FamilyMemberController(families: families, governance: governance, checkIns: checkIns).addRoutes(to: authenticated)
        RecordController(records: records, checkIns: checkIns).addRoutes(to: authenticated)
        RecordVersionController(versions: RecordVersionStore(pool: pool, retention: configuration.lifetimes.recordVersionRetention))
            .addRoutes(to: authenticated)
        IdentityRotationController(rotations: IdentityRotationStore(pool: pool), governance: governance).addRoutes(to: authenticated)
        GovernanceController(governance: governance).addRoutes(to: authenticated)
        KeyBackupController(backups: KeyBackupStore(pool: pool)).addRoutes(to: authenticated)
        InvitationController(invitations: InvitationStore(pool: pool)).addRoutes(to: authenticated)
        DeviceCommandController(commands: DeviceCommandStore(pool: pool)).addRoutes(to: authenticated)
        RevocationController(revocations: revocations, maxUploadBytes: configuration.http.maxUploadBytes, metrics: metrics)
            .addRoutes(to: authenticated)
        RevocationExposureController(exposures: RevocationExposureStore(pool: pool)).addRoutes(to: authenticated)
        router.add(middleware: MethodNotAllowedMiddleware(routes: router.routes))
        return router
    }

    /// Watches the topics the outbox publishes to, for `/ready`.
    static func topicWatch(_ kafka: GrantServiceConfiguration.Kafka, logger: Logger) throws -> KafkaTopicWatch {
        let admin = try KafkaAdmin(
            bootstrapServers: kafka.bootstrapServers, clientID: "rescind-grant-service-topics",
            additionalProperties: kafka.producerProperties, logger: logger)
        let topics = [Topic.revocationEvents, .accessEvents, .deviceCommands].map { kafka.topicPrefix + $0.rawValue }
        return KafkaTopicWatch(admin: admin, topics: topics)
    }
}
