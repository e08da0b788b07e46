import Foundation
import RescindClient
import RescindCrypto
import RescindProtocol
import RescindTestSupport
import Testing

/// Clients made as they go (an agent's derived clients, the CLI, a benchmark's fleet) share
/// connections instead of each holding its own. With a URLSession per client, ten derived
/// clients kept forty more descriptors open.
@Suite(.serialized) struct GrantServiceClientConnectionTests {
    /// Open file descriptors of this process: a kept-alive connection holds one here, and the
    /// in-process service holds the other end.
    static func openDescriptors() throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count
    }

    @Test func clientsMadeAndDroppedWorkWithoutAccumulatingConnections() async throws {
        try await GrantServiceHarness.with { service in
            let expected = Data(service.serviceKey.rawRepresentation)
            #expect(try await GrantServiceClient(baseURL: service.baseURL, tls: service.clientTLS).serviceKey().signingPublicKey == expected)
            let before = try Self.openDescriptors()
            for _ in 0..<100 {
                let client = GrantServiceClient(baseURL: service.baseURL, tls: service.clientTLS)
                #expect(try await client.serviceKey().signingPublicKey == expected)
            }
            let opened = try Self.openDescriptors() - before
            #expect(opened < 8, "100 clients made one after another left \(opened) more descriptors open")
        }
    }

    @Test func derivedClientsReuseTheParentsConnections() async throws {
        try await GrantServiceHarness.with { service in
            let deviceKey = Ed25519.PrivateKey()
            let user = try await UserSession.register(
                keys: .generate(), displayName: "Adult A", deviceName: "Adult A's phone", deviceKey: deviceKey,
                baseURL: service.baseURL, tls: service.clientTLS)
            let credentials = GrantServiceClient.DeviceCredentials(deviceID: user.deviceID, signingKey: deviceKey)
            let parent = GrantServiceClient(baseURL: service.baseURL, timeout: .seconds(7), tls: service.clientTLS)
            _ = try await parent.serviceKey()
            let before = try Self.openDescriptors()
            // Kept alive together: clients with connections of their own would each hold one.
            var derived: [GrantServiceClient] = []
            for _ in 0..<10 {
                let client = parent.authenticated(as: credentials)
                #expect(try await client.me().device.deviceID == user.deviceID)
                derived.append(client)
            }
            let opened = try Self.openDescriptors() - before
            #expect(opened < 4, "10 derived clients opened \(opened) descriptors: they do not share connections")
            // Each derived client still authenticates as itself: the parent has no credentials.
            await #expect(throws: GrantServiceError.self) { _ = try await parent.me() }
        }
    }
}
