import Foundation
import RescindClient
import RescindCrypto

/// A device whose keys the bench holds, so that a device agent can be installed for it.
struct AgentIdentity: Sendable {
    let keys: UserKeys
    let deviceID: UUID
    let deviceKey: Ed25519.PrivateKey
}

/// A registered user: the session of their first device, and that device's identity.
struct BenchUser: Sendable {
    let session: UserSession
    let firstDevice: AgentIdentity

    var userID: UUID { session.keys.userID }

    /// Registers another device of this user.
    func addDevice(_ name: String) async throws -> AgentIdentity {
        let key = Ed25519.PrivateKey()
        let added = try await session.addDevice(name: name, deviceKey: key)
        return AgentIdentity(keys: session.keys, deviceID: added.deviceID, deviceKey: key)
    }

    /// Retires the first device, for users that should have no device to notify.
    func retireFirstDevice() async throws {
        try await session.client.retireDevice(firstDevice.deviceID)
    }
}

extension BenchStack {
    func user(_ name: String) async throws -> BenchUser {
        let key = Ed25519.PrivateKey()
        let session = try await register(name, deviceKey: key)
        return BenchUser(session: session, firstDevice: AgentIdentity(keys: session.keys, deviceID: session.deviceID, deviceKey: key))
    }
}
