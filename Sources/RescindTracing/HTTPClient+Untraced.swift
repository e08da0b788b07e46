import AsyncHTTPClient

extension HTTPClient {
    /// A process-wide client that opens no spans of its own. AsyncHTTPClient traces every request
    /// with the process's tracer and records the full URL, and Rescind's URLs carry user, device and
    /// family member ids; a caller that wants a span opens its own (method and status only).
    /// Never shut down, like `.shared`.
    public static let untraced: HTTPClient = {
        var configuration = HTTPClient.Configuration.singletonConfiguration
        configuration.tracing.tracer = nil
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()
}
