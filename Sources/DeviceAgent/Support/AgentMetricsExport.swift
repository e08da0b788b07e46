import Foundation
import Metrics
import Prometheus
import RescindClient
import RescindCrypto
import RescindObservability
import ServiceLifecycle

/// Prometheus exposition for a device, which runs no HTTP server: the text format written
/// to a file (`RESCIND_AGENT_METRICS_FILE`, 0600, replaced atomically every
/// `metricsInterval`) for node_exporter's textfile collector or any scraper on the device.
public enum AgentMetricsExport {
    /// Makes Prometheus the process's swift-metrics backend (once per process, as swift-metrics
    /// requires) and returns the text renderer to pass to `DeviceAgent.run(metrics:)`.
    public static func bootstrapPrometheus() -> @Sendable () -> [UInt8] {
        let registry = AgentMetrics.process.registry
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        return { registry.emitToBuffer() }
    }
}

/// Writes the metrics file now and then, and once more at shutdown.
struct MetricsFileService: Service {
    let path: String
    let interval: Duration
    let render: @Sendable () -> [UInt8]
    let engine: AgentEngine

    func run() async throws {
        let (path, interval, render, engine) = (self.path, self.interval, self.render, self.engine)
        try await runUntilShutdown {
            while !Task.isCancelled {
                await Self.write(path: path, render: render, engine: engine)
                try await Task.sleep(for: interval)
            }
        }
        await Self.write(path: path, render: render, engine: engine)
    }

    /// Off the cooperative pool (`BlockingWork`): the write ends in an fsync, which on the pool
    /// would hold one of its threads, and every task of the agent with it, while the disk flushes.
    private static func write(path: String, render: @escaping @Sendable () -> [UInt8], engine: AgentEngine) async {
        do {
            try await BlockingWork.run { try SecureFiles.writeOwnerOnly(Data(render()), to: path) }
        } catch {
            engine.logger.warning("metrics file not written", metadata: [LogKey.error: "\(error)"])
        }
    }
}
