import Foundation
import Logging
import RescindObservability
import RescindProtocol

/// Notes what a device was handed — its wrapped key, a page of the change feed — once its
/// request has been answered successfully (`DeviceSyncStore`). Bookkeeping only: a failure to
/// note it is logged and counted (`GrantMetrics.deviceSyncStateFailures`), and the device
/// still gets its answer.
struct DeviceCheckIns: Sendable {
    let store: DeviceSyncStore
    let metrics: GrantMetrics

    func keyFetched(_ key: WrappedKeyResponse, by device: AuthenticatedDevice, logger: Logger) async {
        await note(familyMemberID: key.familyMemberID, logger: logger) {
            try await store.noteKeyFetched(
                deviceID: device.deviceID, familyMemberID: key.familyMemberID, fmkVersion: key.fmkVersion)
        }
    }

    /// The page's last change is the position the device was given up to; a page without any
    /// change moves nothing.
    func pageRead(_ page: RecordPage, of familyMemberID: UUID, by device: AuthenticatedDevice, logger: Logger) async {
        let gaveChanges = !page.records.isEmpty || !page.deletedRecordIDs.isEmpty
        await note(familyMemberID: familyMemberID, logger: logger) {
            try await store.notePageRead(
                deviceID: device.deviceID, familyMemberID: familyMemberID, changeSeq: gaveChanges ? page.nextCursor : nil,
                ciphertextVersion: page.currentFMKVersion)
        }
    }

    private func note(familyMemberID: UUID, logger: Logger, _ body: () async throws -> Void) async {
        do {
            try await body()
        } catch {
            metrics.deviceSyncStateFailures.increment()
            logger.warning(
                "could not record the device's check-in; its request was answered",
                metadata: [LogKey.familyMemberID: "\(familyMemberID)", LogKey.error: "\(error)"])
        }
    }
}
