import Foundation
import Hummingbird
import Logging
import RescindCrypto
import RescindKafka
import RescindObservability
import RescindPostgres
import RescindProtocol
import ServiceLifecycle
import RescindServiceSupport

/// Builds the audit service: the input consumer, the deadline monitor, the
/// notification relay, the live event stream and the HTTP API, sharing one pool.
public enum AuditServiceApplication {
    /// Loads keys, opens the pool (applying migrations if configured) and the producer, and
    /// returns the application ready to `run()` (or `runService()`, which stops gracefully on
    /// SIGTERM/SIGINT: the message in hand is finished and its offset committed).
    /// - Parameters:
    ///   - onServerRunning: told the bound port (useful with port 0).
    ///   - onMetricsServerRunning: told the metrics listener's bound port, when it has one
    ///     (`configuration.http.metricsPort`).
    /// - Throws: `AuditServiceError` for an unusable key or grant-service setting,
    ///   `PostgresError`/`KafkaError` when the database or the producer cannot be set up.
    public static func build(
        configuration: AuditServiceConfiguration,
        logger: Logger,
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in },
        onMetricsServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) async throws -> some ApplicationProtocol {
        // First, so that an unusable certificate stops the service before it touches anything
        // (the server is built again below with its channel handlers).
        _ = try ServiceServer.builder(tls: configuration.http.tls)
        let signingKey = try SigningKeyFile.load(
            path: configuration.signingKeyFile, createIfMissing: configuration.createSigningKeyIfMissing)
        let grantService = try configuration.grantService.url.map { text in
            guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https" else {
                throw AuditServiceError.configuration("RESCIND_GRANT_SERVICE_URL is not an http(s) URL")
            }
            do {
                try configuration.grantService.tls.check(url)
            } catch {
                throw AuditServiceError.configuration("RESCIND_GRANT_SERVICE_URL: \(error)")
            }
            return GrantServiceLink(baseURL: url, tls: try configuration.grantService.tls.configuration())
        }
        // Read before anything is opened: a bad token file stops the service at once.
        let operatorToken = try configuration.monitoring.operatorTokenFile.map { try OperatorToken(file: $0) }
        let grantServiceKey = try await GrantServiceKey.resolve(
            pinned: configuration.grantService.publicKey, link: grantService, logger: logger)

        let opened = try await ServiceDatabase.open(configuration.database, applicationName: "rescind-audit-service", logger: logger)
        let (database, pool) = (opened.configuration, opened.pool)
        // Heads written before heads were signed (migration 0005) are signed once, here.
        let signedHeads = try await pool.transaction { try await AuditLog(signingKey: signingKey).signUnsignedHeads(on: $0) }
        if signedHeads > 0 { logger.notice("signed chain heads written before heads were signed", metadata: [LogKey.entries: "\(signedHeads)"]) }
        let kafka = configuration.kafka
        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(
                bootstrapServers: kafka.bootstrapServers, clientID: "rescind-audit-service",
                additionalProperties: kafka.producerProperties),
            logger: logger)

        let metrics = AuditMetrics()
        let topics = TopicNames(prefix: kafka.topicPrefix)
        let auditLog = AuditLog(signingKey: signingKey)
        let rejections = RejectionLog(configuration.quarantine)
        let tracker = RevocationTracker(
            auditLog: auditLog, ackDeadline: configuration.tracking.ackDeadline, rejections: rejections,
            heldAcks: HeldAckLimits(perDevice: configuration.tracking.heldAcksPerDevice, total: configuration.tracking.heldAcksMax))
        let writer = ConclusionWriter(signingKey: signingKey)
        let handler = InboundMessageHandler(
            pool: pool, topics: topics, grantServiceKey: grantServiceKey, auditLog: auditLog, tracker: tracker,
            writer: writer, violationIntake: KeyChainViolationIntake(auditLog: auditLog), rejections: rejections,
            metrics: metrics, logger: logger)
        let hub = EventStreamHub(
            pool: pool, database: database, pollInterval: configuration.notifications.pollInterval,
            heartbeatInterval: configuration.monitoring.streamHeartbeat,
            bufferLimit: configuration.monitoring.streamBufferEvents, metrics: metrics, logger: logger)
        let monitoring = MonitoringAuthorization(operatorToken: operatorToken, grantService: grantService, metrics: metrics)
        if operatorToken == nil {
            logger.notice(
                "no RESCIND_AUDIT_OPERATOR_TOKEN_FILE: the monitoring API answers owners' grant-service tokens only")
        }

        var topicWatch: KafkaTopicWatch?
        if kafka.checkTopics {
            let admin = try KafkaAdmin(
                bootstrapServers: kafka.bootstrapServers, clientID: "rescind-audit-service-topics",
                additionalProperties: kafka.producerProperties, logger: logger)
            topicWatch = KafkaTopicWatch(admin: admin, topics: topics.inputs + [topics.name(.auditNotifications)])
        }
        if let reason = await topicWatch?.notReadyReason() {
            logger.warning("not ready until the topics exist", metadata: [LogKey.reason: "\(reason)"])
        }

        let health = ConsumerHealth()
        let lagProbe = ConsumerLagProbe(topics: topics, metrics: metrics)
        let router = buildRouter(
            configuration: configuration, pool: pool, metrics: metrics, health: health, signingKey: signingKey,
            grantService: grantService, monitoring: monitoring, hub: hub, topicWatch: topicWatch)

        let stalledReaderTimeout = configuration.monitoring.stalledReaderTimeout
        var app = Application(
            router: router,
            server: try ServiceServer.builder(
                tls: configuration.http.tls,
                http1: .init(additionalChannelHandlers: [
                    StalledReaderHandler(timeout: stalledReaderTimeout) { metrics.stalledReadersClosed.increment() }
                ])),
            configuration: .init(
                address: .hostname(configuration.http.host, port: configuration.http.port),
                serverName: "rescind-audit-service"),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? 0) },
            logger: logger)
        // First of the services, so that it stops last: scrapes see the shutdown through.
        if let metricsPort = configuration.http.metricsPort {
            app.addServices(
                try MetricsListener.server(
                    host: configuration.http.host, port: metricsPort, tls: configuration.http.tls, registry: metrics.registry,
                    serverName: "rescind-audit-service", logger: logger, onServerRunning: onMetricsServerRunning))
        }
        let monitor = DeadlineMonitor(
            pool: pool, tracker: tracker, writer: writer, handler: handler,
            pendingAckLifetime: configuration.tracking.pendingAckLifetime, streamRetention: configuration.tracking.streamRetention,
            reissue: .init(attempts: configuration.tracking.reissueAttempts, backoff: configuration.tracking.reissueBackoff),
            metrics: metrics, logger: logger)
        let janitor = AuditJanitor(pool: pool, retention: configuration.quarantine.retention, metrics: metrics, logger: logger)
        // Graceful shutdown runs in reverse: HTTP first, then the consumer (finishing and
        // committing the message in hand), the stream, the monitor, the relay (publishing
        // what was concluded), and the pool last.
        app.addServices(
            PoolService(pool: pool),
            OutboxRelay.notifications(
                pool: pool, database: database, producer: producer, topics: topics, settings: configuration.notifications,
                metrics: metrics, logger: logger),
            PeriodicService(name: "deadline scan", interval: configuration.tracking.scanInterval, logger: logger) {
                try await monitor.scan()
            },
            PeriodicService(name: "audit janitor sweep", interval: configuration.quarantine.janitorInterval, logger: logger) {
                try await janitor.sweep()
            },
            ReachabilityProbe.database(pool: pool, metrics: metrics.service, interval: configuration.probeInterval, logger: logger),
            ReachabilityProbe.broker(metrics: metrics.service, interval: configuration.probeInterval, logger: logger) {
                await producer.brokersAnswer()
            },
            PeriodicService(name: "consumer lag probe", interval: configuration.probeInterval, logger: logger) {
                try await lagProbe.probe()
            },
            hub,
            InboundConsumer(
                configuration: KafkaConsumerConfiguration(
                    bootstrapServers: kafka.bootstrapServers, clientID: "rescind-audit-service",
                    groupID: kafka.consumerGroup, autoOffsetReset: .earliest, sessionTimeout: kafka.sessionTimeout,
                    heartbeatInterval: kafka.heartbeatInterval, additionalProperties: kafka.consumerProperties),
                topics: topics.inputs, handler: handler, retry: kafka.handlingRetry, health: health, lagProbe: lagProbe,
                logger: logger))
        return app
    }

    /// Every HTTP route of the service (tests enumerate them against `openapi.yaml`).
    static func buildRouter(
        configuration: AuditServiceConfiguration, pool: PostgresConnectionPool, metrics: AuditMetrics,
        health: ConsumerHealth, signingKey: Ed25519.PrivateKey, grantService: GrantServiceLink?,
        monitoring: MonitoringAuthorization, hub: EventStreamHub, topicWatch: KafkaTopicWatch? = nil
    ) -> Router<BasicRequestContext> {
        let serviceKey = signingKey.publicKey
        let auditLog = AuditLog(signingKey: signingKey)
        let router = Router(context: BasicRequestContext.self)
        router.add(middleware: ServerTracingMiddleware())
        router.add(middleware: ErrorMiddleware())
        router.add(middleware: HTTPMetricsMiddleware(metrics.service))
        // Shed: every route that may answer 503 by its document; the static ones and metrics never are.
        router.add(
            middleware: InFlightLimitMiddleware(
                limit: configuration.http.maxInFlight,
                exempt: ["/health", "/ready", "/metrics", "/v1/openapi.yaml", "/v1/service-key", "/", "/monitor", "/monitor.js"],
                changed: { metrics.requestsInFlight.set(to: Double($0)) }, shed: { metrics.requestsShed.increment() }))
        OperationsController(
            pool: pool, metrics: metrics, health: health, serviceKey: serviceKey, topicWatch: topicWatch,
            servesMetrics: configuration.http.metricsPort == nil
        ).addRoutes(to: router)
        AccessLogController(
            pool: pool, authorization: OwnerAuthorization(grantService: grantService, pool: pool),
            verifier: AuditChainVerifier(publicKey: serviceKey), auditLog: auditLog
        ).addRoutes(to: router)
        KeyChainViolationController(
            pool: pool, grantService: grantService, monitoring: monitoring,
            intake: KeyChainViolationIntake(auditLog: auditLog), writer: ConclusionWriter(signingKey: signingKey),
            metrics: metrics
        ).addRoutes(to: router)
        MonitoringController(pool: pool, authorization: monitoring).addRoutes(to: router)
        MonitoringSummaryController(pool: pool, authorization: monitoring).addRoutes(to: router)
        EventStreamController(
            hub: hub, authorization: monitoring,
            slots: StreamSlots(capacity: configuration.monitoring.maxStreams, metrics: metrics), pool: pool
        ).addRoutes(to: router)
        router.add(middleware: MethodNotAllowedMiddleware(routes: router.routes))
        return router
    }
}
