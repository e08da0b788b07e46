import Foundation
import Hummingbird
import Prometheus
import RescindCrypto
import RescindKafka
import RescindPostgres
import RescindProtocol
import RescindServiceSupport

/// Health, readiness, metrics, the OpenAPI document and the service's public signing key.
struct OperationsController {
    let pool: PostgresConnectionPool
    let serviceKey: Ed25519.PublicKey
    let metrics: GrantMetrics
    /// Not ready until the topics the outbox publishes to exist (nil: not checked).
    var topicWatch: KafkaTopicWatch? = nil
    /// `/metrics` here; false when it has a port of its own (`MetricsListener`): 404 here then.
    var servesMetrics = true

    struct Status: ResponseCodable {
        let status: String
    }

    func addRoutes(to router: Router<GrantRequestContext>) {
        router.get("health") { _, _ in Status(status: "ok") }
        router.get("ready") { _, _ in
            guard await ReachabilityProbe.databaseAnswers(pool) else { throw APIError.unavailable }
            if let reason = await topicWatch?.notReadyReason() {
                throw APIError(.serviceUnavailable, "topics_missing", reason)
            }
            return Status(status: "ready")
        }
        if servesMetrics {
            router.get("metrics") { _, _ in MetricsListener.response(metrics.registry) }
        }
        router.get("v1/openapi.yaml") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/yaml"],
                body: .init(byteBuffer: ByteBuffer(bytes: Self.openAPIDocument)))
        }
        router.get("v1/service-key") { _, _ in
            ServiceKeyResponse(signingPublicKey: Data(serviceKey.rawRepresentation))
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

