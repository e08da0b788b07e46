import Foundation
import RescindClient
import RescindCrypto
import RescindProtocol

/// The abusive client of the load section: anonymous requests that make the grant service work
/// — registrations, authentication challenges and token minting — sent at a fixed rate from one
/// or many loopback source addresses, one thread and one keep-alive connection each (real
/// threads, so that blocking sockets never take the cooperative pool the honest devices run on).
///
/// Each connection cycles through: a valid registration (from a pool built beforehand; once
/// the pool is used up, the same bodies again, which the service refuses as duplicates), a
/// challenge for one of the flood's own registered devices, and the signed
/// answer to that challenge (a real token minted; when the challenge was refused, an answer to
/// an unknown challenge). Each connection keeps its own schedule (`rate / connections` a
/// second, no catching up after a slow answer), so what it achieved is reported beside the target.
struct Flood: Sendable {
    /// What the service answered, counted by kind.
    struct Counts: Sendable {
        var sent = 0
        var succeeded = 0
        /// 429 `rate_limited`.
        var rateLimited = 0
        /// 503 `overloaded` (load shedding).
        var shed = 0
        /// Any other 4xx or 5xx (duplicate registrations, unknown challenges).
        var otherRefusals = 0
        /// No answer (connection refused or reset, 10 s timeout).
        var failures = 0
        var elapsed = 0.0
        var firstFailure: String?

        var rate: Double { elapsed > 0 ? Double(sent) / elapsed : 0 }

        mutating func add(_ other: Counts) {
            sent += other.sent
            succeeded += other.succeeded
            rateLimited += other.rateLimited
            shed += other.shed
            otherRefusals += other.otherRefusals
            failures += other.failures
            elapsed = max(elapsed, other.elapsed)
            firstFailure = firstFailure ?? other.firstFailure
        }
    }

    struct Device: Sendable {
        let deviceID: UUID
        let key: Ed25519.PrivateKey
    }

    /// Source addresses (127.0.0.x), and connections from each.
    let sources: [String]
    let connectionsPerSource: Int
    /// Requests a second, all connections together.
    let rate: Double
    let port: UInt16
    let registrations: [[UInt8]]
    let devices: [Device]

    /// Valid registration bodies for `count` new users (each its own keys and device).
    static func registrationBodies(count: Int) throws -> [[UInt8]] {
        try (0..<count).map { index in
            let request = try RegisterUserRequest.signed(
                keys: UserKeys.generate(), displayName: "Flood \(index)",
                device: RegisterDeviceRequest(
                    deviceID: UUID(), name: "flood device", signingPublicKey: Data(Ed25519.PrivateKey().publicKey.rawRepresentation)))
            return [UInt8](try CanonicalJSON.encode(request))
        }
    }

    /// Floods until `stop` is set. - Returns: the answers of every connection together.
    func run(until stop: Locked<Bool>) async -> Counts {
        let total = Locked(Counts())
        let group = DispatchGroup()
        let connections = sources.flatMap { source in Array(repeating: source, count: connectionsPerSource) }
        let interval = Double(connections.count) / rate
        for (index, source) in connections.enumerated() {
            group.enter()
            let flood = self
            Thread.detachNewThread {
                let counts = flood.connection(source: source, index: index, interval: interval, stop: stop)
                total.withLock { $0.add(counts) }
                group.leave()
            }
        }
        await withCheckedContinuation { continuation in
            group.notify(queue: .global()) { continuation.resume() }
        }
        return total.current
    }

    private func connection(source: String, index: Int, interval: Double, stop: Locked<Bool>) -> Counts {
        let connection = RawHTTPConnection(source: source, port: port)
        var counts = Counts()
        let start = Date()
        // Spread the connections' first requests over one interval.
        var next = start.addingTimeInterval(interval * Double(index) / Double(max(1, sources.count * connectionsPerSource)))
        var step = index
        var challenge: (id: UUID, nonce: Data, device: Device)?
        while !stop.current {
            let wait = next.timeIntervalSinceNow
            if wait > 0 { Thread.sleep(forTimeInterval: wait) }
            next = max(next.addingTimeInterval(interval), Date())
            if stop.current { break }
            let device = devices[step % devices.count]
            let (path, body): (String, [UInt8])
            switch step % 3 {
            case 0:
                (path, body) = ("/v1/users", registrations[(step / 3) % registrations.count])
            case 1:
                (path, body) = ("/v1/auth/challenge", Self.encode(ChallengeRequest(deviceID: device.deviceID)))
            default:
                let answer = challenge ?? (UUID(), Data(repeating: 0, count: 32), device)
                let signature = answer.device.key.signature(
                    for: DeviceAuthentication.signingInput(challengeID: answer.id, deviceID: answer.device.deviceID, nonce: answer.nonce))
                (path, body) = (
                    "/v1/auth/token",
                    Self.encode(TokenRequest(challengeID: answer.id, deviceID: answer.device.deviceID, signature: Data(signature)))
                )
                challenge = nil
            }
            step += 1
            counts.sent += 1
            do {
                let response = try connection.exchange("POST", path, body: body)
                switch response.status {
                case 200..<300:
                    counts.succeeded += 1
                    if path == "/v1/auth/challenge", let issued = try? CanonicalJSON.decode(ChallengeResponse.self, from: Data(response.body)) {
                        challenge = (issued.challengeID, issued.nonce, device)
                    }
                case 429: counts.rateLimited += 1
                case 503: counts.shed += 1
                default: counts.otherRefusals += 1
                }
            } catch {
                counts.failures += 1
                counts.firstFailure = counts.firstFailure ?? "\(error)"
            }
        }
        counts.elapsed = Date().timeIntervalSince(start)
        return counts
    }

    private static func encode(_ value: some Encodable) -> [UInt8] {
        (try? [UInt8](CanonicalJSON.encode(value))) ?? []
    }
}
