import Foundation
import RescindClient
import RescindCrypto
import RescindTLS

/// Everything the agent can do only while unlocked, built from one opened keystore: talk
/// to the grant service as this device, unwrap cached FMKs, sign acks, open the sealed inbox.
struct UnlockedKeys: Sendable {
    let keystore: Keystore
    let fetcher: FamilyMemberFetcher
    let signer: AckSigner

    var atRest: AtRestLayer { fetcher.atRest }

    init(
        _ keystore: Keystore, grantServiceURL: URL, tls: ClientTLS, keyHistory: KeyHistoryStore,
        violationReporter: any KeyChainViolationReporting
    ) {
        self.keystore = keystore
        let session = UserSession(
            keys: keystore.userKeys, deviceID: keystore.deviceID, deviceKey: keystore.deviceKey, baseURL: grantServiceURL, tls: tls,
            keyHistory: keyHistory, violationReporter: violationReporter)
        fetcher = FamilyMemberFetcher(session: session, storageKey: keystore.storageKey, atRest: AtRestLayer(key: keystore.atRestKey))
        signer = AckSigner(deviceID: keystore.deviceID, deviceKey: keystore.deviceKey)
    }
}
