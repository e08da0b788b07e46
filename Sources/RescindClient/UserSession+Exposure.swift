import Foundation
import RescindCrypto
import RescindProtocol

extension GrantServiceClient {
    /// A revocation's exposure report as stored: sealed to the owner who committed it (404 for
    /// anyone else, an unknown event, or one committed before reports were kept).
    public func sealedRevocationExposure(_ eventID: UUID) async throws -> SealedRevocationExposure {
        try await send(.get, "v1/revocations/\(eventID)/exposure")
    }
}

extension UserSession {
    /// The exposure report of `eventID`, opened with this user's X25519 key.
    /// - Throws: `GrantServiceError` from the service; `CryptoError.authenticationFailed` when
    ///   it is sealed to another key (an identity rotated since the revocation).
    public func revocationExposure(_ eventID: UUID) async throws -> RevocationExposure {
        let sealed = try await client.sealedRevocationExposure(eventID)
        let report = try Self.open(sealed, keys: keys)
        // The sealed bytes are the service's to serve, not to choose: the report must be the one asked for.
        guard report.eventID == eventID, report.schema == RevocationExposure.schema else {
            throw GrantServiceError(status: 502, code: "exposure_mismatch", message: "the exposure report is not this revocation's")
        }
        return report
    }

    /// Opens a sealed exposure report with the owner's X25519 key.
    public static func open(_ sealed: SealedRevocationExposure, keys: UserKeys) throws -> RevocationExposure {
        let plaintext = try AnonymousSealedBox.open([UInt8](sealed.sealedReport), using: keys.agreementKey)
        return try CanonicalJSON.decode(RevocationExposure.self, from: Data(plaintext))
    }
}
