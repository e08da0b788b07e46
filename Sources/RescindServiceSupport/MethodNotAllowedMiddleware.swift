import Hummingbird

/// Answers a request whose path names a route, but with a method that route does not serve, with
/// 405 `method_not_allowed` and `Allow` listing the methods it does serve (RFC 9110 §15.5.6),
/// where the router alone answers 404: a client that sent `PUT` for a `POST` learns its mistake,
/// and a path that names nothing stays 404.
///
/// Add it to the router after its last route: a router middleware wraps only the routes added
/// after it, and always the router's not-found responder, which is the one this must see.
public struct MethodNotAllowedMiddleware<Context: RequestContext>: RouterMiddleware {
    let routes: [(path: [RouterPath.Element], methods: [HTTPRequest.Method])]

    public init(routes: [Router<Context>.RouteDescription]) {
        var byPath: [String: (path: [RouterPath.Element], methods: [HTTPRequest.Method])] = [:]
        for route in routes {
            let components = route.path.components.filter { $0 != .null }
            byPath[route.path.description, default: (components, [])].methods.append(route.method)
        }
        self.routes = byPath.values.map { ($0.path, $0.methods) }
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            let allowed = allowedMethods(for: request.uri.path)
            guard !allowed.isEmpty else { throw error }
            let list = allowed.map(\.rawValue).joined(separator: ", ")
            var headers = HTTPFields()
            headers[.allow] = list
            throw APIError(
                .methodNotAllowed, "method_not_allowed", "\(request.method.rawValue) is not served here; this path serves \(list)",
                headers: headers)
        }
    }

    /// The methods of every route whose path matches `path`, in a stable order.
    func allowedMethods(for path: String) -> [HTTPRequest.Method] {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        var methods = Set<HTTPRequest.Method>()
        for route in routes where route.path.count == segments.count {
            if zip(route.path, segments).allSatisfy({ $0 ~= $1 }) { methods.formUnion(route.methods) }
        }
        return methods.sorted { $0.rawValue < $1.rawValue }
    }
}
