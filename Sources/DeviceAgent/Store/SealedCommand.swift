import Foundation
import RescindClient
import RescindCrypto
import RescindProtocol

/// One entry of the sealed inbox, as it is sealed: a verified command received while the
/// agent was locked and, when the agent could act on it without its keys (an erasure),
/// what it did, the draft of the ack it owes.
struct SealedCommand: Codable, Sendable, Equatable {
    /// What a locked erasure did; signed into a `DeviceAck` at unlock.
    struct Result: Codable, Sendable, Equatable {
        var outcome: DeviceAck.Outcome
        var recordsProcessed: Int
        var fmkVersion: Int
        var durationMs: Int
        var error: String?
        var completedAt: Date
    }

    var command: DeviceCommand
    var result: Result?

    /// Sealed to `recipient` (anyone may seal; only the inbox private key opens).
    func sealed(to recipient: X25519.PublicKey) throws -> Data {
        Data(try AnonymousSealedBox.seal([UInt8](try CanonicalJSON.encode(self)), to: recipient))
    }

    /// - Throws: `AgentError.storage` when the entry does not open with `key` or is not an entry.
    static func open(_ sealed: Data, with key: X25519.PrivateKey) throws -> SealedCommand {
        guard let bytes = try? AnonymousSealedBox.open([UInt8](sealed), using: key),
            let entry = (try? CanonicalJSON.decode(SealedCommand.self, from: Data(bytes)))
                ?? (try? earlierForm.decode(SealedCommand.self, from: Data(bytes)))
        else { throw AgentError(.storage, "a sealed inbox entry does not open with this device's inbox key") }
        return entry
    }

    /// How agents before the one JSON form sealed an entry: dates as seconds, the result's
    /// fields in camel case and the command's in snake case. An inbox sealed by such an agent
    /// still opens after an upgrade, so no command received while it was locked is lost.
    private static var earlierForm: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        decoder.keyDecodingStrategy = .custom { path in
            let key = path[path.count - 1]
            return WireKeys.camel(key.stringValue).map(WireKeys.Key.init(stringValue:)) ?? key
        }
        return decoder
    }
}
