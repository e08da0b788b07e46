import Foundation
import Hummingbird
import Logging
import Synchronization

/// An OpenTelemetry collector as small as a test needs: `POST /v1/traces` (OTLP/HTTP, JSON) on a
/// loopback port, keeping every span it was sent with the `service.name` of its resource; or,
/// with `holdFor`, holding every request that long first (a slow collector).
public final class OTLPReceiver: Sendable {
    private let bodies = Mutex<[Data]>([])
    private let running: Mutex<ServiceUnderTest?> = Mutex(nil)

    public var endpoint: URL { running.withLock { $0!.baseURL } }

    public static func start(holdFor: Duration? = nil) async throws -> OTLPReceiver {
        let receiver = OTLPReceiver()
        let router = Router(context: BasicRequestContext.self)
        router.post("v1/traces") { request, _ -> HTTPResponse.Status in
            if let holdFor { try await Task.sleep(for: holdFor) }
            let body = try await request.body.collect(upTo: 16 << 20)
            receiver.bodies.withLock { $0.append(Data(buffer: body)) }
            return .ok
        }
        let logger = Logger(label: "test.otlp-receiver")
        let running = try await ServiceUnderTest.start(logger: logger, tls: false) { onServerRunning in
            Application(
                router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: "otlp-receiver"),
                onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? 0) }, logger: logger)
        }
        receiver.running.withLock { $0 = running }
        return receiver
    }

    /// Stops listening (a collector gone down); stopping again does nothing.
    public func stop() async {
        await running.withLock { running in
            defer { running = nil }
            return running
        }?.stop()
    }

    /// Every span received so far, as its OTLP JSON object, with the `service.name` and the
    /// `service.instance.id` it came from under the keys `service` and `instance`.
    public var spans: [[String: Any]] {
        bodies.withLock { $0 }.flatMap { body -> [[String: Any]] in
            let request = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
            return (request?["resourceSpans"] as? [[String: Any]] ?? []).flatMap { resource -> [[String: Any]] in
                let attributes = (resource["resource"] as? [String: Any])?["attributes"] as? [[String: Any]] ?? []
                func value(_ key: String) -> String {
                    attributes.first { $0["key"] as? String == key }
                        .flatMap { ($0["value"] as? [String: Any])?["stringValue"] as? String } ?? ""
                }
                let origin = ["service": value("service.name"), "instance": value("service.instance.id")]
                return (resource["scopeSpans"] as? [[String: Any]] ?? []).flatMap { scope in
                    (scope["spans"] as? [[String: Any]] ?? []).map { $0.merging(origin) { old, _ in old } }
                }
            }
        }
    }

    /// The raw request bodies, for a scan of everything that left a process.
    public var rawBodies: [String] { bodies.withLock { $0 }.map { String(decoding: $0, as: UTF8.self) } }
}
