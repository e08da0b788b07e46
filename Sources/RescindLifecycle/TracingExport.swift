import RescindTracing
import ServiceLifecycle

/// The span exporter as a service: sends batches until graceful shutdown, then what is left
/// (within the exporter's request timeout). First in a service group, so that it stops last and
/// the spans of everything else's shutdown still go out.
public struct TracingExport: Service {
    let exporter: OTLPExporter

    public init(exporter: OTLPExporter) {
        self.exporter = exporter
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown { await exporter.run() }
    }
}
