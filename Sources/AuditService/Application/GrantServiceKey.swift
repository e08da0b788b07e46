import Foundation
import Logging
import RescindCrypto
import RescindObservability

/// The key every grant-service event must be signed with.
///
/// Pinned (`RESCIND_GRANT_SERVICE_PUBLIC_KEY`, base64) is the production choice: nothing
/// on the network can substitute it. Otherwise it is fetched once at start from the grant
/// service (`GET /v1/service-key`), trusting the operator's network for that one request;
/// the start waits (retrying) for the grant service to come up.
enum GrantServiceKey {
    static func resolve(
        pinned: String?, link: GrantServiceLink?, attempts: Int = 30, retryDelay: Duration = .seconds(1), logger: Logger
    ) async throws -> Ed25519.PublicKey {
        if let pinned {
            guard let bytes = Data(base64Encoded: pinned), let key = try? Ed25519.PublicKey(rawRepresentation: [UInt8](bytes))
            else {
                throw AuditServiceError.configuration("RESCIND_GRANT_SERVICE_PUBLIC_KEY is not a base64 Ed25519 public key")
            }
            return key
        }
        guard let link else {
            throw AuditServiceError.configuration("set RESCIND_GRANT_SERVICE_PUBLIC_KEY or RESCIND_GRANT_SERVICE_URL")
        }
        var attempt = 1
        while true {
            do {
                let key = try await link.serviceKey()
                logger.info("fetched the grant service key", metadata: [LogKey.key: "\(key)"])
                return key
            } catch where attempt < attempts {
                logger.warning("grant service key unavailable; retrying", metadata: [LogKey.error: "\(error)"])
                attempt += 1
                try await Task.sleep(for: retryDelay)
            }
        }
    }
}
