import Hummingbird
import Models
import Runtime
import Storage

/// `PUT /v1/users/{id}` (the API key) and the user's devices (the API key, or the user's own
/// token: an app registers its push token, but cannot take one another user holds,
/// `InboxAuthMiddleware`).
extension Routes {
    /// 201 when the user was created, 200 otherwise, a stale write included (it changed nothing;
    /// the answer says what stands).
    @Sendable func putUser(_ request: Request, context: EngagedRequestContext) async throws -> Response {
        let id = try Self.userID(context)
        let body = try JSONBody.decode(UserBody.self, from: try await JSONBody.read(request))
        let result = try await perform { try await runtime.putUser(body.update(id: id)) }
        if result.created { environment.legacyUserTokens?.remember([id]) }
        return JSONBody.response(result.created ? .created : .ok, UserView(result))
    }

    /// The user as stored and the version of each field group; 404 for an unknown user.
    @Sendable func getUser(_ request: Request, context: EngagedRequestContext) async throws -> Response {
        let id = try Self.userID(context)
        let stored = try await perform { try await runtime.storedUser(id) }
        return JSONBody.response(.ok, UserView(profile: stored.profile, versions: stored.versions))
    }

    /// 201 when the token is new to the user (new, or moved from another user by the API key),
    /// 200 when the user had it already (environment and platform are replaced), 409 when a user
    /// token would move it from another user.
    @Sendable func registerDevice(_ request: Request, context: EngagedRequestContext) async throws -> Response {
        let id = try Self.userID(context)
        try Self.refuseLegacyWrite(context, "register a device")
        let body = try JSONBody.decode(DeviceBody.self, from: try await JSONBody.read(request))
        let (registration, isNew) = try await perform {
            try await runtime.registerDevice(
                token: body.token, environment: body.environment, platform: body.platform, for: id,
                takingFromOthers: context.caller == .backend)
        }
        return JSONBody.response(isNew ? .created : .ok, DeviceView(registration))
    }

    @Sendable func devices(_ request: Request, context: EngagedRequestContext) async throws -> Response {
        let id = try Self.userID(context)
        let devices = try await perform { try await runtime.devices(of: id) }
        return JSONBody.response(.ok, DeviceList(items: devices.map(DeviceView.init)))
    }

    /// 204, or 404 when the user has no such token (or is unknown).
    @Sendable func removeDevice(_ request: Request, context: EngagedRequestContext) async throws -> Response {
        let id = try Self.userID(context)
        try Self.refuseLegacyWrite(context, "remove a device")
        let token = try Self.deviceToken(context)
        guard try await perform({ try await runtime.removeDevice(token: token, of: id) }) else {
            throw Problem.notFound("user \"\(id)\" has no device with this token")
        }
        return Response(status: .noContent)
    }

    /// 403 for a deprecated HMAC user token (`Caller.legacyUser`): it never expires and cannot be
    /// revoked, so it reads but does not write (`what` says what it tried).
    static func refuseLegacyWrite(_ context: EngagedRequestContext, _ what: String) throws(Problem) {
        guard case .legacyUser? = context.caller else { return }
        throw Problem.forbidden("a legacy user token reads only; \(what) with a signed user token or the API key")
    }

    /// The token of the path, lowercased; 400 naming `token` when it is not one.
    static func deviceToken(_ context: some RequestContext) throws(Problem) -> String {
        switch DeviceRegistration.normalizedToken(context.parameters.get("token") ?? "") {
        case .success(let token): return token
        case .failure(let error): throw Problem.badRequest(error.problem, field: "token")
        }
    }
}

/// `POST /v1/users/{id}/devices`.
struct DeviceBody: Decodable {
    var token: String
    var environment: PushEnvironment
    var platform: String

    init(from decoder: any Decoder) throws {
        let path = decoder.codingPath
        let c = try decoder.container(keyedBy: AnyKey.self)
        try c.rejectKeys(outside: ["token", "environment", "platform"], at: path)
        let token: String = try c.decode("token")
        switch DeviceRegistration.normalizedToken(token) {
        case .success(let normalized): self.token = normalized
        case .failure(let error): throw invalidValue(path, "token", error.problem)
        }
        environment = try c.decode("environment")
        platform = try c.decodeIfPresent("platform") ?? "ios"
        guard DeviceRegistration.platforms.contains(platform) else {
            throw invalidValue(
                path, "platform", "\"\(platform)\" is not one of \(DeviceRegistration.platforms.sorted())")
        }
    }
}

/// A registered device; its `id` is the token.
struct DeviceView: Encodable {
    var id: String
    var environment: PushEnvironment
    var platform: String
    /// ISO 8601 UTC: the latest registration.
    var registeredAt: String

    init(_ registration: DeviceRegistration) {
        id = registration.token
        environment = registration.environment
        platform = registration.platform
        registeredAt = registration.registeredAt.iso8601
    }
}

/// `GET /v1/users/{id}/devices`: one page (a user has at most `DeviceRegistration.maxPerUser`).
struct DeviceList: Encodable {
    var items: [DeviceView]

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: AnyKey.self)
        try c.encode(items, forKey: AnyKey("items"))
        try c.encodeNil(forKey: AnyKey("nextCursor"))
    }
}
