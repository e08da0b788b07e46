import Foundation
import RescindCrypto
import RescindProtocol

/// The identity keys of the people this user deals with, pinned the first time they are
/// seen (trust on first use) or, better, from an invitation accepted in person or after the
/// two compared verification codes. A pinned user whose keys the grant service later shows
/// changed is refused until the change is accepted (`rescind identity trust`), so a
/// compromised service cannot quietly substitute someone's keys.
///
/// One small JSON file in the profile directory (0600, replaced atomically), or kept in memory
/// only (a session built without a profile). Shared by reference: every copy of a session pins
/// into the same store. `@unchecked Sendable`: every access to `pins` holds `lock`.
public final class IdentityPins: @unchecked Sendable {
    public enum Source: String, Codable, Sendable {
        /// Seen first through the grant service, nothing compared.
        case firstUse = "first_use"
        /// From an invitation: the token carried the inviter's fingerprint, the acceptance was
        /// signed with the token's key.
        case invitation
        /// Accepted after the user compared verification codes.
        case comparedCode = "compared_code"
        /// Reached from an earlier pin through identity-rotation statements signed by the pinned
        /// key. A thief holding the old key can sign such a statement too, so this key may keep
        /// a copy it already holds but is given nothing new (no grant, no ownership) until the
        /// codes were compared.
        case rotation
    }

    public struct Pin: Codable, Sendable, Equatable {
        public var identityPublicKey: Data
        public var agreementPublicKey: Data
        public var source: Source
        public var pinnedAt: Date

        public init(identityPublicKey: Data, agreementPublicKey: Data, source: Source, pinnedAt: Date = Date()) {
            self.identityPublicKey = identityPublicKey
            self.agreementPublicKey = agreementPublicKey
            self.source = source
            // Kept to the millisecond, as the file stores it.
            self.pinnedAt = Date(timeIntervalSince1970: (pinnedAt.timeIntervalSince1970 * 1000).rounded(.down) / 1000)
        }


        /// The same keys, whatever the source.
        public func matches(identity: Data, agreement: Data) -> Bool {
            identityPublicKey == identity && agreementPublicKey == agreement
        }
    }

    /// What a check against the pins found.
    public enum Check: Sendable, Equatable {
        /// Never seen: pin it (first use) or, better, compare codes first.
        case unpinned
        /// The pinned keys.
        case matches(Pin)
        /// The service shows other keys than the ones pinned.
        case changed(Pin)
    }

    /// The file, or nil for a store kept in memory.
    public let path: String?
    private let lock = NSLock()
    private var pins: [UUID: Pin]

    /// An empty store that lives as long as the process.
    public init() {
        path = nil
        pins = [:]
    }

    /// Loads the pins at `path` (none if the file does not exist yet).
    public init(path: String) throws {
        self.path = path
        guard FileManager.default.fileExists(atPath: path) else {
            pins = [:]
            return
        }
        let bytes = try SecureFiles.readOwnerOnly(path, kind: "identity pins file")
        do {
            pins = try JSONDecoder.pins.decode([UUID: Pin].self, from: Data(bytes))
        } catch {
            throw IdentityPinsError("\(path) is not a valid identity pins file: \(error)")
        }
    }

    /// The pins file of a profile directory.
    public static func path(inProfile directory: String) -> String { directory + "/identity-pins.json" }

    public subscript(userID: UUID) -> Pin? { lock.withLock { pins[userID] } }

    public func check(_ userID: UUID, identity: Data, agreement: Data) -> Check {
        guard let pin = self[userID] else { return .unpinned }
        return pin.matches(identity: identity, agreement: agreement) ? .matches(pin) : .changed(pin)
    }

    /// Pins (or re-pins) `userID` to these keys and writes the file before it counts.
    public func pin(_ userID: UUID, _ pin: Pin) throws {
        try lock.withLock {
            var next = pins
            next[userID] = pin
            if let path { try SecureFiles.writeOwnerOnly(try JSONEncoder.pins.encode(next), to: path) }
            pins = next
        }
    }
}

public struct IdentityPinsError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

extension JSONEncoder {
    fileprivate static var pins: JSONEncoder {
        let encoder = CanonicalJSON.encoder()
        encoder.outputFormatting.insert(.prettyPrinted)
        return encoder
    }
}

extension JSONDecoder {
    fileprivate static var pins: JSONDecoder { CanonicalJSON.decoder() }
}

extension IdentityPins.Pin {
    /// Whether the user's `current` keys follow from this pin through `rotations`, each statement
    /// signed by the key it replaces and by the new one (identity-key rotation): then the change
    /// is the user's own doing, as far as keys can tell. A thief holding the old identity key can
    /// make such a statement too, which is why the stolen-device flow compares codes instead.
    public func follows(to current: UserResponse, through rotations: [IdentityRotation]) -> Bool {
        var identity = identityPublicKey
        var agreement = agreementPublicKey
        for rotation in rotations {
            let statement = rotation.statement
            // Statements before the pin are history: skip until the pinned key is the one replaced.
            guard statement.previousIdentityPublicKey == identity else { continue }
            guard statement.userID == current.userID, rotation.hasValidSignatures() else { return false }
            identity = statement.identityPublicKey
            agreement = statement.agreementPublicKey
        }
        return identity == current.identityPublicKey && agreement == current.agreementPublicKey
    }
}
