import Foundation
import RescindClient
import RescindCrypto
import RescindProtocol

/// The network half of sync: asks the grant service for versions, wrapped FMKs and
/// records, and proves what it downloaded (the FMK unwraps, every record decrypts) before
/// anything reaches the local store. Stateless; the store decides what to keep.
struct FamilyMemberFetcher: Sendable {
    let session: UserSession
    let storageKey: SecretKey
    let atRest: AtRestLayer
    var pageSize = 1000

    /// This device's commands kept by the grant service after position `after` (unverified).
    func missedCommands(after: Int64) async throws -> DeviceCommandList {
        try await GrantServiceCall.run { try await session.client.deviceCommands(after: after) }
    }

    /// The family members this user currently has an active grant for.
    func accessibleFamilyMembers() async throws -> [FamilyMemberResponse] {
        try await GrantServiceCall.run { try await session.client.familyMembers() }
    }

    /// The service's current FMK version; `AgentError.accessRevoked` on 403.
    func currentVersion(_ familyMemberID: UUID) async throws -> Int {
        try await GrantServiceCall.run { try await session.client.fmkVersion(familyMemberID).currentFMKVersion }
    }

    /// Downloads and verifies the current FMK and every record under it.
    ///
    /// - Parameter minimum: the version a command announced; an older answer means the
    ///   service (or a replica) is behind: `.serviceBehind`, retried later.
    /// - Parameter floor: the highest version this device has seen; anything lower is a
    ///   downgrade and refused (`.versionDowngrade`).
    /// - Parameter store: where records wait when they span more than one page.
    /// - Parameter timer: gets the key, download and verify phases (`RotationPhases`).
    func rotation(
        _ familyMemberID: UUID, minimum: Int, floor: Int, store: AgentStore, timer: RotationTimer? = nil
    ) async throws -> RotationResult {
        for _ in 0..<3 {
            // The change feed's first page is fetched while the key is fetched and verified (two
            // round trips at once instead of one after the other), and looked at only once the key
            // is verified: its records must then open under the verified FMK at the key's version,
            // or the page is dropped (a version behind or ahead: `raced`, fetched again).
            async let firstPage = GrantServiceCall.run {
                try await session.client.changes(familyMemberID, since: 0, limit: pageSize)
            }
            // Verified against the owner-signed key history before anything else looks at it.
            let verified = try await GrantServiceCall.run { try await session.verifiedKey(familyMemberID) }
            timer?.end(\.key)
            let wrapped = verified.wrapped
            guard wrapped.fmkVersion >= floor else {
                throw AgentError(.versionDowngrade, "the grant service offered FMK v\(wrapped.fmkVersion) below v\(floor) already seen")
            }
            guard wrapped.fmkVersion >= minimum else {
                throw AgentError(.serviceBehind, "the grant service is at FMK v\(wrapped.fmkVersion), the command names v\(minimum)")
            }
            let fmk = verified.fmk
            let (records, cursor, raced) = try await allRecords(
                familyMemberID, version: wrapped.fmkVersion, fmk: fmk, first: try await firstPage, store: store, timer: timer)
            // Another revocation committed while we downloaded: start over at its version.
            if raced { continue }
            let local = try FMKWrapping.wrapForOwner(
                fmk, familyMemberID: familyMemberID, version: UInt32(wrapped.fmkVersion), masterKey: storageKey)
            timer?.end(\.download)
            return RotationResult(
                familyMemberID: familyMemberID, fmkVersion: wrapped.fmkVersion, wrappedFMK: Data(local),
                records: records, cursor: cursor, atRest: atRest)
        }
        throw AgentError(.serviceBehind, "the FMK kept changing while records were downloaded")
    }

    /// Whether the owner signed this user's exclusion: the verified head of the key history
    /// (readable by former holders) is at or after `heldVersion` and does not name this user. A
    /// bare 403 is not a reason to erase (a compromised server or a proxy can send one); this is.
    /// A history that fails verification (reported by the verifier) or cannot be read is no
    /// reason either; transient failures throw (try again later).
    func erasureIsSigned(_ familyMemberID: UUID, heldVersion: Int) async throws -> Bool {
        let entry: KeyHistoryStore.Entry
        do {
            entry = try await GrantServiceCall.run { try await session.verifiedHistory(familyMemberID) }
        } catch let error as AgentError where !error.isTransient {
            return false
        }
        let head = entry.head.statement
        return head.holder(session.keys.userID) == nil && head.fmkVersion >= heldVersion
    }

    /// Reports that the service refused access without an owner-signed reason (`unsigned_erasure`).
    func reportUnsignedErasure(_ familyMemberID: UUID, heldVersion: Int) async {
        await report(
            .unsignedErasure, familyMemberID, offeredVersion: nil,
            "the grant service answered 403 but no owner statement at or after v\(heldVersion) excludes this user; the copy is kept")
    }

    /// Reports a refusal the agent made outside the verifier (e.g. a version below the verified one).
    func report(_ code: KeyChainViolation.Code, _ familyMemberID: UUID, offeredVersion: Int?, _ detail: String) async {
        let verified = session.keyHistory.entry(familyMemberID)?.seq ?? 0
        await session.report(
            KeyHistoryError(code, familyMemberID: familyMemberID, statementSeq: nil, detail),
            offeredVersion: offeredVersion, verifiedSeq: verified)
    }

    /// Changes after `state.syncCursor`, when they are all still under the held version.
    /// - Returns: `nil` when the service has moved to a newer version (rotate instead).
    func incremental(_ state: FamilyMemberState, fmk: SecretKey) async throws -> IncrementalResult? {
        var result = IncrementalResult(
            familyMemberID: state.familyMemberID, fmkVersion: state.fmkVersion, records: [], deletedRecordIDs: [],
            cursor: state.syncCursor, atRest: atRest)
        while true {
            let page = try await GrantServiceCall.run {
                try await session.client.changes(state.familyMemberID, since: result.cursor, limit: pageSize)
            }
            guard page.currentFMKVersion == state.fmkVersion,
                page.records.allSatisfy({ $0.fmkVersion == state.fmkVersion })
            else { return nil }
            result.records += page.records
            result.deletedRecordIDs += page.deletedRecordIDs
            result.cursor = page.nextCursor
            if !page.hasMore { break }
        }
        try Self.verify(result.records, fmk: fmk)
        return result
    }

    /// The whole change feed at `version`, each page verified under `fmk` as it arrives;
    /// `raced` when a page or a record is not at `version`. A feed of one page stays in
    /// memory; a longer one goes page by page to the store's incoming table.
    /// - Parameter first: the feed's first page (from position 0), already fetched.
    private func allRecords(
        _ familyMemberID: UUID, version: Int, fmk: SecretKey, first: RecordPage, store: AgentStore, timer: RotationTimer?
    ) async throws -> (RotatedRecords, Int64, raced: Bool) {
        let download = UUID()
        do {
            return try await self.download(
                familyMemberID, version: version, fmk: fmk, first: first, as: download, into: store, timer: timer)
        } catch {
            // Nothing unverified or half-downloaded stays behind.
            try? await store.clearIncoming(download: download)
            throw error
        }
    }

    private func download(
        _ familyMemberID: UUID, version: Int, fmk: SecretKey, first: RecordPage, as download: UUID, into store: AgentStore,
        timer: RotationTimer?
    ) async throws -> (RotatedRecords, Int64, raced: Bool) {
        var cursor: Int64 = 0
        var staged = false
        // The ids kept so far (16 bytes each, not the records): what the staged rows must add up to.
        var kept: Set<UUID> = []
        var prefetched: RecordPage? = first
        while true {
            let page: RecordPage
            if let first = prefetched {
                (page, prefetched) = (first, nil)
            } else {
                page = try await GrantServiceCall.run {
                    try await session.client.changes(familyMemberID, since: cursor, limit: pageSize)
                }
            }
            guard page.currentFMKVersion == version, page.records.allSatisfy({ $0.fmkVersion == version }) else {
                if staged { try await store.clearIncoming(download: download) }
                return (.inMemory([]), 0, true)
            }
            if let timer {
                let (started, startedCPU) = (ContinuousClock.now, RotationPhases.threadCPU())
                try Self.verify(page.records, fmk: fmk)
                timer.add(RotationPhases.threadCPU() - startedCPU, to: \.verifyCPU)
                timer.end(\.download, at: started)
                timer.end(\.verify)
            } else {
                try Self.verify(page.records, fmk: fmk)
            }
            cursor = page.nextCursor
            if !staged, !page.hasMore {
                // One page: nothing to stage.
                let deleted = Set(page.deletedRecordIDs)
                return (.inMemory(page.records.filter { !deleted.contains($0.recordID) }), cursor, false)
            }
            try await store.stageIncoming(download: download, records: page.records, deleted: page.deletedRecordIDs, atRest: atRest)
            staged = true
            kept.formUnion(page.records.map(\.recordID))
            kept.subtract(page.deletedRecordIDs)
            if !page.hasMore { break }
        }
        guard try await store.incomingCount(download: download) == kept.count else {
            throw AgentError(.downloadDisturbed, "staged records went missing during the download; it is done again")
        }
        return (.staged(download: download, count: kept.count), cursor, false)
    }

    /// Every record opens under `fmk` (the plaintext is dropped at once).
    static func verify(_ records: [RecordResponse], fmk: SecretKey) throws {
        for record in records {
            do {
                _ = try RecordCipher.open(record, fmk: fmk)
            } catch {
                throw AgentError(.verificationFailed, "record \(record.recordID.text) does not decrypt under FMK v\(record.fmkVersion)")
            }
        }
    }
}
