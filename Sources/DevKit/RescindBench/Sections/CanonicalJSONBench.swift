import Foundation
import RescindProtocol

/// 1b. What the one JSON form costs: a revocation event naming ten devices (the message of
/// every revocation) encoded and decoded by `CanonicalJSON`, against the same coders with
/// Foundation's default keys, so that the figure is what the spelling rule (`WireKeys`: a
/// `.custom` key strategy, its conversions cached) adds on top of Foundation's own cost.
enum CanonicalJSONBench {
    static let iterations = 20_000

    static func run(options: BenchOptions, report: BenchReport) throws {
        let event = Self.event(devices: 10)
        let canonical = (encoder: CanonicalJSON.encoder(), decoder: CanonicalJSON.decoder())
        let plain = (encoder: CanonicalJSON.encoder(), decoder: CanonicalJSON.decoder())
        plain.encoder.keyEncodingStrategy = .useDefaultKeys
        plain.decoder.keyDecodingStrategy = .useDefaultKeys
        let canonicalBytes = try canonical.encoder.encode(event)
        let plainBytes = try plain.encoder.encode(event)
        guard try canonical.decoder.decode(RevocationEvent.self, from: canonicalBytes) == event,
            try plain.decoder.decode(RevocationEvent.self, from: plainBytes) == event
        else { throw BenchError("a revocation event did not survive its own coder") }
        report.begin("1b. Canonical JSON: one revocation event of ten devices (\(canonicalBytes.count) bytes), \(Self.iterations) times")

        /// Seconds per message, the median of the runs (the first, a warm-up, left out).
        func perMessage(_ body: () throws -> Void) throws -> Double {
            var passes: [Double] = []
            for _ in 0...options.runs {
                let (_, seconds) = try Timing.measure { for _ in 0..<Self.iterations { try body() } }
                passes.append(seconds / Double(Self.iterations))
            }
            return Statistics.median(Array(passes.dropFirst()))
        }
        let encode = try perMessage { _ = try canonical.encoder.encode(event) }
        let encodePlain = try perMessage { _ = try plain.encoder.encode(event) }
        let decode = try perMessage { _ = try canonical.decoder.decode(RevocationEvent.self, from: canonicalBytes) }
        let decodePlain = try perMessage { _ = try plain.decoder.decode(RevocationEvent.self, from: plainBytes) }
        for (figure, project, baseline) in [("encode", encode, encodePlain), ("decode", decode, decodePlain)] {
            report.add(
                "\(figure): CanonicalJSON (snake-case keys by WireKeys)", project: Format.duration(project),
                baseline: "\(Format.duration(baseline)) (the same coder, Foundation's default keys)",
                ratio: String(format: "%.2f×", project / baseline))
        }
        report.note(
            "Both coders sort keys and write dates and bytes alike; only the key strategy differs. Bulk record bodies "
                + "travel in the binary form, not in JSON: this is the cost of a message on a topic or an API body.")
    }

    /// A revocation event as the grant service writes it, naming `devices` devices.
    static func event(devices: Int) -> RevocationEvent {
        var issued = 0
        func uuid() -> UUID {
            issued += 1
            return UUID(uuidString: String(format: "6f1c2a9e-0000-4000-8000-%012d", issued))!
        }
        let key = Data(repeating: 7, count: 32)
        return RevocationEvent(
            eventID: uuid(), familyMemberID: uuid(), ownerUserID: uuid(), ownerAgreementPublicKey: key, revokedUserID: uuid(),
            revokedByUserID: uuid(), newFMKVersion: 2, recordsReencrypted: 500, reason: "lost phone", clientDurationMs: 412,
            occurredAt: Date(timeIntervalSince1970: 1_764_547_200.123),
            expectedDevices: (0..<devices).map { index in
                .init(deviceID: uuid(), userID: uuid(), action: index == 0 ? .secureDeletion : .fmkRotation, signingPublicKey: key)
            })
    }
}
