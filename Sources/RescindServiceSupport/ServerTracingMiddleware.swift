import Hummingbird
import Tracing

/// A server span for every request, continuing the caller's trace when its `traceparent` is
/// well formed (a malformed one starts a trace of our own). The span is named after the route's
/// template (`POST /v1/revocations/{revocationID}/commit`), never the path as sent, and records
/// the method and the status only: a path or a header could carry an id. With no tracer
/// bootstrapped (`RESCIND_OTEL_EXPORTER_OTLP_ENDPOINT` unset) every span is a no-op.
public struct ServerTracingMiddleware<Context: RequestContext>: RouterMiddleware {
    public init() {}

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var serviceContext = ServiceContext.current ?? .topLevel
        InstrumentationSystem.instrument.extract(request.headers, into: &serviceContext, using: HTTPFieldsExtractor())
        let route = context.endpointPath ?? "unmatched"
        return try await InstrumentationSystem.tracer.withAnySpan(
            "\(request.method.rawValue) \(route)", context: serviceContext, ofKind: .server
        ) { span in
            span.attributes["http.request.method"] = request.method.rawValue
            do {
                let response = try await next(request, context)
                Self.record(response.status, on: span)
                return response
            } catch let error as any HTTPResponseError {
                Self.record(error.status, on: span)
                throw error
            }
        }
    }

    static func record(_ status: HTTPResponse.Status, on span: any Span) {
        span.attributes["http.response.status_code"] = status.code
        if status.code >= 500 { span.setStatus(SpanStatus(code: .error)) }
    }
}

struct HTTPFieldsExtractor: Extractor {
    func extract(key: String, from fields: HTTPFields) -> String? {
        fields.first { $0.name.canonicalName == key }?.value
    }
}
