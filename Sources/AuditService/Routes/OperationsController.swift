import Foundation
import Hummingbird
import RescindCrypto
import RescindKafka
import RescindPostgres
import RescindProtocol
import RescindServiceSupport

/// Health, readiness, metrics and the audit service's public key (which verifies its
/// notifications and the signatures of audit entries).
struct OperationsController {
    let pool: PostgresConnectionPool
    let metrics: AuditMetrics
    /// Not ready while the input consumer keeps failing on a transient error.
    let health: ConsumerHealth
    let serviceKey: Ed25519.PublicKey
    /// Not ready until the topics the service reads and writes exist (nil: not checked).
    var topicWatch: KafkaTopicWatch? = nil
    /// `/metrics` here; false when it has a port of its own (`MetricsListener`): 404 here then.
    var servesMetrics = true

    struct Status: Encodable {
        let status: String
    }

    func addRoutes(to router: Router<BasicRequestContext>) {
        router.get("health") { _, _ in try Response.json(Status(status: "ok")) }
        router.get("ready") { _, _ in
            guard await ReachabilityProbe.databaseAnswers(pool) else { throw APIError.unavailable }
            if let reason = await topicWatch?.notReadyReason() {
                throw APIError(.serviceUnavailable, "topics_missing", reason)
            }
            guard health.isReady else { throw APIError.unavailable }
            return try Response.json(Status(status: "ready"))
        }
        if servesMetrics {
            router.get("metrics") { _, _ in MetricsListener.response(metrics.registry) }
        }
        router.get("v1/service-key") { _, _ in
            try Response.json(ServiceKeyResponse(signingPublicKey: Data(serviceKey.rawRepresentation)))
        }
        router.get("v1/openapi.yaml") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/yaml"],
                body: .init(byteBuffer: ByteBuffer(bytes: Self.openAPIDocument)))
        }
    }

    /// The hand-written OpenAPI document, bundled with the module.
    static let openAPIDocument: [UInt8] = {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "yaml"),
            let data = try? Data(contentsOf: url)
        else { return Array("openapi document missing from the bundle\n".utf8) }
        return [UInt8](data)
    }()
}
