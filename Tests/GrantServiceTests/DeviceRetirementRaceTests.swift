import Foundation
import RescindCrypto
import RescindPostgres
import RescindProtocol
import RescindTestSupport
import Testing

@testable import RescindClient

/// The thief holds a copy of one of B's devices and races B's other device: whatever was
/// authenticated first, a device retired before its request reaches the database acts on nothing,
/// and of two devices retiring each other at once exactly one is left.
@Suite(.serialized) struct DeviceRetirementRaceTests {
    /// Holds `device`'s row locked while `request` runs, until the request waits on the lock; then
    /// retires the device and lets the request go on: it was authenticated while the device was
    /// active and reaches its transaction after the retirement.
    static func retire<T: Sendable>(
        _ device: UUID, on service: GrantServiceHarness, under request: @escaping @Sendable () async throws -> T
    ) async throws -> Result<T, any Error> {
        try await service.withConnection { connection in
            try await connection.transaction { connection in
                _ = try await connection.query("SELECT 1 FROM devices WHERE device_id = \(device) FOR UPDATE")
                let running = Task { () -> Result<T, any Error> in
                    do { return .success(try await request()) } catch { return .failure(error) }
                }
                try await service.eventually("the request waits on the device's row") {
                    try await service.withConnection { other in
                        try await other.query(
                            "SELECT count(*) FROM pg_locks WHERE NOT granted AND locktype IN ('transactionid', 'tuple')"
                        ).first!.decode(Int.self, column: 0) > 0
                    }
                }
                try await connection.execute("UPDATE devices SET retired_at = now() WHERE device_id = \(device)")
                return running
            }
        }.value
    }

    @Test func anIdentityRotationAuthenticatedBeforeItsDeviceWasRetiredChangesNothing() async throws {
        try await GrantServiceHarness.with { service in
            let phone = try await service.user("Adult B")
            _ = try await phone.addDevice(name: "Adult B's iPad")
            _ = try await phone.client.me()  // the phone's token, minted while it is active
            let newKeys = UserKeys.generate(userID: phone.keys.userID)
            let result = try await Self.retire(phone.deviceID, on: service) {
                try await phone.registerRotation(to: newKeys, currentGeneration: 1)
            }
            guard case .failure(let error as GrantServiceError) = result else {
                Issue.record("the retired phone rotated the identity: \(result)")
                return
            }
            #expect(error.status == 401 && error.code == "device_retired", "\(error)")
            let user = try await service.user("Adult C").client.user(phone.keys.userID)
            #expect(user.identityGeneration == 1)
            #expect(user.identityPublicKey == Data(phone.keys.identityKey.publicKey.rawRepresentation))
        }
    }

    @Test func aRetirementRequestedByADeviceRetiredMeanwhileRetiresNothing() async throws {
        try await GrantServiceHarness.with { service in
            let phone = try await service.user("Adult B")
            let tablet = try await phone.addDevice(name: "Adult B's iPad")
            _ = try await phone.client.me()
            let result = try await Self.retire(phone.deviceID, on: service) {
                try await phone.client.retireDevice(tablet.deviceID)
            }
            guard case .failure(let error as GrantServiceError) = result else {
                Issue.record("the retired phone retired the tablet")
                return
            }
            #expect(error.status == 401 && error.code == "device_retired", "\(error)")
            // The tablet still works.
            _ = try await tablet.client.me()
        }
    }

    @Test func ofTwoDevicesRetiringEachOtherAtOnceExactlyOneIsLeft() async throws {
        try await GrantServiceHarness.with { service in
            for round in 0..<8 {
                let phone = try await service.user("Adult B \(round)")
                let tablet = try await phone.addDevice(name: "tablet")
                _ = try await (phone.client.me(), tablet.client.me())
                async let first: Void? = try? phone.client.retireDevice(tablet.deviceID)
                async let second: Void? = try? tablet.client.retireDevice(phone.deviceID)
                let outcomes = await [first, second]
                let retired = try await service.withConnection { connection in
                    try await connection.query(
                        "SELECT count(*) FROM devices WHERE device_id IN (\(phone.deviceID), \(tablet.deviceID)) AND retired_at IS NOT NULL"
                    ).first!.decode(Int.self, column: 0)
                }
                #expect(retired == 1, "round \(round): \(retired) of the two devices retired")
                #expect(outcomes.compactMap { $0 }.count == 1, "round \(round): both retirements answered success")
            }
        }
    }
}
