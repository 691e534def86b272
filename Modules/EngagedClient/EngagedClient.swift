import EngagedAPI
public import Foundation
public import HTTPTypes
public import OpenAPIRuntime

#if canImport(OpenAPIURLSession)
    import OpenAPIURLSession
#else
    import OpenAPIAsyncHTTPClient
#endif

/// A client of `engaged`, generated from the server's openapi.yaml (`Client`, one method per
/// operation), with what every caller needs set up: the credential, the API's instants and the
/// platform's HTTP client.
extension Client {
    /// A client of the server at `serverURL` (its root, e.g. `https://engaged.example.com`) that
    /// sends `Authorization: Bearer <credential>` with every request: the API key (a backend) or
    /// a user token (`mintUserToken`; an app). Without a `transport`, URLSession on Apple
    /// platforms and async-http-client's shared client elsewhere.
    public init(
        serverURL: URL, credential: String, transport: (any ClientTransport)? = nil,
        middlewares: [any ClientMiddleware] = []
    ) {
        self.init(
            serverURL: serverURL, configuration: .engaged, transport: transport ?? Self.platformTransport(),
            middlewares: [HeaderParametersAsWritten(), BearerCredential(credential)] + middlewares)
    }

    static func platformTransport() -> any ClientTransport {
        #if canImport(OpenAPIURLSession)
            URLSessionTransport()
        #else
            AsyncHTTPClientTransport()
        #endif
    }
}

/// Sends `Authorization: Bearer <credential>`, replacing any `Authorization` the request had.
///
/// The document's security schemes (`apiKey`, `userToken`) are both bearer credentials; the
/// generator does not apply them, so this middleware does, for every operation. The routes that
/// need no credential (`/healthz`, `/readyz`, `/metrics`) ignore it.
public struct BearerCredential: ClientMiddleware {
    private let value: String

    public init(_ credential: String) { value = "Bearer \(credential)" }

    public func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        request.headerFields[.authorization] = value
        return try await next(request, body, baseURL)
    }
}

/// Sends the document's header parameters (`Idempotency-Key`, `If-None-Match`) as the caller
/// wrote them.
///
/// The generated code writes a header parameter as a URI component, percent-encoded:
/// `If-None-Match: W/"7"` would leave as `W%2F%227%22`, which names no entity tag, and an
/// `Idempotency-Key` with a space would reach the server as another key than the same key sent
/// by any other client. Percent-decoding is the exact inverse of that encoding (a `%` the caller
/// wrote was sent as `%25`), so this restores the caller's value byte for byte.
public struct HeaderParametersAsWritten: ClientMiddleware {
    /// Every header parameter of the document's operations.
    public static let names: [HTTPField.Name] = [HTTPField.Name("Idempotency-Key")!, .ifNoneMatch]

    public init() {}

    public func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        for name in Self.names {
            guard let encoded = request.headerFields[name], let written = encoded.removingPercentEncoding else {
                continue
            }
            request.headerFields[name] = written
        }
        return try await next(request, body, baseURL)
    }
}
