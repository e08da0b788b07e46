import Foundation
import RescindMacros
import RescindProtocol

/// A revocation's exposure report as the owner reads it: the grant service's sealed snapshot
/// (`RevocationExposure`: what each device of the revoked user had fetched) joined with the audit
/// service's per-device acknowledgements (`RevocationStatus`: whether it erased, and when), and
/// what no revocation can undo.
@MemberwiseInit
public struct ExposureReport: Sendable {
    public let exposure: RevocationExposure
    /// nil when the audit service has no record of the revocation (yet).
    public let status: RevocationStatus?

    /// Ack states that mean the device did what the revocation asked (or no longer needs to).
    public static let erasedStates: Set<String> = ["applied", "already_applied", "healed"]

    /// How one device stands.
    public enum Erasure: Equatable, Sendable {
        /// Acknowledged its erasure (the audit service's state, and when).
        case acknowledged(state: String, at: Date?)
        /// Commanded, and no acknowledgement of erasure (yet): the audit service's state.
        case notAcknowledged(state: String)
        /// Not commanded: an interactive client, or a retired device.
        case notCommanded
    }

    public func erasure(of device: RevocationExposure.Device) -> Erasure {
        guard device.commanded else { return .notCommanded }
        guard let ack = status?.devices.first(where: { $0.deviceID == device.deviceID }) else {
            return .notAcknowledged(state: status == nil ? "unknown" : "not_tracked")
        }
        return Self.erasedStates.contains(ack.state)
            ? .acknowledged(state: ack.state, at: ack.ackedAt) : .notAcknowledged(state: ack.state)
    }

    /// Devices that fetched something and never acknowledged their erasure: they still hold
    /// ciphertext and the old key.
    public var stillHolding: [RevocationExposure.Device] {
        exposure.devices.filter { device in
            // An interactive client keeps nothing beyond its process (plaintext it showed is a standing limit).
            guard !device.neverSynced, device.role == .agent else { return false }
            if case .acknowledged = erasure(of: device) { return false }
            return true
        }
    }

    /// What no revocation can undo.
    public var limits: [String] {
        [
            "Plaintext already seen, copied or exported (screenshots, printouts, backups, exports) stays with the revoked user.",
            "A device that never acknowledged its erasure keeps its ciphertext and the FMK v\(exposure.fromFMKVersion) key: "
                + "they open the records as they were before the revocation, nothing written or re-encrypted after it.",
            "Counts are of records whose ciphertext at the revocation a device had been given; it may also hold earlier "
                + "ciphertexts of records edited since it synced, and keys of earlier versions it fetched.",
        ]
    }

    /// The report as the CLI prints it.
    public var lines: [String] {
        let total = exposure.recordsTotal
        var lines = [
            "exposure of revocation \(Self.id(exposure.eventID)): user \(Self.id(exposure.revokedUserID)) lost access to "
                + "family member \(Self.id(exposure.familyMemberID)) (FMK v\(exposure.fromFMKVersion) → v\(exposure.newFMKVersion), "
                + "\(total) records), committed \(Timestamp.format(exposure.committedAt))"
        ]
        if exposure.devices.isEmpty { lines.append("  the revoked user has no device") }
        for device in exposure.devices {
            var kind = device.role.rawValue
            if let retired = device.retiredAt { kind += ", retired \(Timestamp.format(retired))" }
            lines.append("  \(Self.id(device.deviceID))  \(device.name) (\(kind))")
            if let lastSync = device.lastSyncAt {
                let held = device.changeSeq == nil
                    ? "FMK v\(device.fmkVersion ?? 0) key, no record"
                    : "FMK v\(device.fmkVersion ?? 0), \(device.recordsFetched) of \(total) records (change-feed position \(device.changeSeq!))"
                lines.append("    fetched: \(held); last sync before the revocation \(Timestamp.format(lastSync))"
                    + (device.changesSinceSync > 0 ? "; \(device.changesSinceSync) change(s) since it never received" : ""))
            } else {
                lines.append("    fetched: nothing: it never synced this family member")
            }
            switch erasure(of: device) {
            case .acknowledged(let state, let at):
                lines.append("    erasure: acknowledged \(at.map(Timestamp.format) ?? "") (\(state))")
            case .notAcknowledged(let state):
                lines.append(device.neverSynced
                    ? "    erasure: not acknowledged (\(state)); it holds nothing of this family member"
                    : "    erasure: NEVER ACKNOWLEDGED (\(state)): still holds ciphertext and the FMK v\(device.fmkVersion ?? 0) key")
            case .notCommanded:
                lines.append(device.retiredAt != nil
                    ? "    erasure: not commanded (retired: no command reaches it; what it held stays on it)"
                    : "    erasure: not commanded (an interactive client keeps no key or record beyond the process)")
            }
        }
        let holding = stillHolding
        lines.append(holding.isEmpty
            ? "no device of the revoked user is known to still hold ciphertext and the old key"
            : "still holding ciphertext and the old key: " + holding.map { "\($0.name) (\(Self.id($0.deviceID)))" }.joined(separator: ", "))
        lines.append("what revocation cannot undo:")
        lines += limits.map { "  - " + $0 }
        return lines
    }

    static func id(_ id: UUID) -> String { String(id.uuidString.lowercased().prefix(8)) }
}
