import HTTPTypes
import Hummingbird
import OpenAPIHummingbird
import OpenAPIRuntime
import Synchronization

/// The generated routing registers each operation through this transport: it hands the route to
/// Hummingbird's router and keeps its method and path in `table`, so that a request for a known
/// path with another method is 405 with the methods the path takes
/// (`MethodNotAllowedMiddleware`), not 404. With `/metrics` on its own listener, the API's router
/// does not take it at all.
struct RecordingTransport: ServerTransport {
    let router: Router<EngagedRequestContext>
    let table: RouteTable
    let metricsServedElsewhere: Bool

    func register(
        _ handler:
            @Sendable @escaping (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (
                HTTPResponse, HTTPBody?
            ), method: HTTPRequest.Method, path: String
    ) throws {
        if metricsServedElsewhere, path == "/metrics" { return }
        router.register(handler, method: method, path: path)
        table.add(method: method, path: path)
    }
}

/// The API's routes by method and path pattern (`/v1/users/{id}`).
final class RouteTable: Sendable {
    private let routes = Mutex<[(method: HTTPRequest.Method, segments: [Substring])]>([])

    func add(method: HTTPRequest.Method, path: String) {
        routes.withLock { $0.append((method, Self.segments(path))) }
    }

    /// The methods a route takes at `path`, sorted; empty when no route has the path.
    func methods(at path: String) -> [String] {
        let segments = Self.segments(path)
        let methods = routes.withLock { routes in
            routes.filter { route in
                route.segments.count == segments.count
                    && zip(route.segments, segments).allSatisfy { pattern, segment in
                        pattern == segment || (pattern.hasPrefix("{") && pattern.hasSuffix("}") && !segment.isEmpty)
                    }
            }.map(\.method.rawValue)
        }
        return Set(methods).sorted()
    }

    private static func segments(_ path: String) -> [Substring] {
        path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map { $0 }
    }
}

/// 405 for a path the API has, asked with a method none of its routes takes (`HEAD`, `TRACE`,
/// `DELETE /healthz`): `Allow` names the methods it takes (RFC 9110 section 15.5.6). A `HEAD`
/// answer carries no body.
struct MethodNotAllowedMiddleware<Context: RequestContext>: RouterMiddleware {
    let routes: RouteTable

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            let allowed = routes.methods(at: request.uri.path)
            guard !allowed.isEmpty else { throw error }
            var problem = Problem(
                slug: "method-not-allowed", title: "Method not allowed", status: .methodNotAllowed,
                detail: "\(request.uri.path) takes \(allowed.joined(separator: ", "))")
            problem.allow = allowed.joined(separator: ", ")
            guard request.method == .head else { throw problem }
            var response = try problem.response(from: request, context: context)
            response.body = ResponseBody()
            return response
        }
    }
}
