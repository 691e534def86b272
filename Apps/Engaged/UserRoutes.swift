import EngagedAPI
import Models
import Runtime
import Storage

/// `GET` and `PUT /v1/users/{id}` (the API key) and the user's devices (the API key, or the
/// user's own token: an app registers its push token, but cannot take one another user holds).
extension Routes {
    /// 201 when the user was created, 200 otherwise, a stale write included (it changed nothing;
    /// the answer says what stands).
    func putUser(_ input: Operations.PutUser.Input) async throws -> Operations.PutUser.Output {
        let id = try Self.userID(input.path.id)
        let body =
            switch input.body {
            case .json(let body): body
            }  // the only media type the document takes
        let update = try UserUpdate(body, id: id)
        let result = try await perform { try await runtime.putUser(update) }
        if result.created { environment.legacyUserTokens?.remember([id]) }
        let view = Components.Schemas.UserView(result)
        return result.created ? .created(.init(body: .json(view))) : .ok(.init(body: .json(view)))
    }

    /// The user as stored and the version of each field group; 404 for an unknown user.
    func getUser(_ input: Operations.GetUser.Input) async throws -> Operations.GetUser.Output {
        let id = try Self.userID(input.path.id)
        let stored = try await perform { try await runtime.storedUser(id) }
        return .ok(
            .init(body: .json(Components.Schemas.StoredUser(profile: stored.profile, versions: stored.versions))))
    }

    /// 201 when the token is new to the user (new, or moved from another user by the API key),
    /// 200 when the user had it already (environment and platform are replaced), 409 when a user
    /// token would move it from another user.
    func registerDevice(_ input: Operations.RegisterDevice.Input) async throws -> Operations.RegisterDevice.Output {
        let id = try Self.userID(input.path.id)
        let body =
            switch input.body {
            case .json(let body): body
            }  // the only media type the document takes
        let token: String
        switch DeviceRegistration.normalizedToken(body.token) {
        case .success(let normalized): token = normalized
        case .failure(let error): throw Problem.invalidField("token", error.problem)
        }
        let (registration, isNew) = try await perform {
            try await runtime.registerDevice(
                token: token, environment: PushEnvironment(body.environment),
                platform: (body.platform ?? .ios).rawValue, for: id, takingFromOthers: RequestScope.caller == .backend)
        }
        let device = Components.Schemas.Device(registration)
        return isNew ? .created(.init(body: .json(device))) : .ok(.init(body: .json(device)))
    }

    func listDevices(_ input: Operations.ListDevices.Input) async throws -> Operations.ListDevices.Output {
        let id = try Self.userID(input.path.id)
        let devices = try await perform { try await runtime.devices(of: id) }
        // One page: a user has at most `DeviceRegistration.maxPerUser`.
        return .ok(
            .init(body: .json(.init(items: devices.map(Components.Schemas.Device.init), nextCursor: Nullable(nil)))))
    }

    /// 204, or 404 when the user has no such token (or is unknown).
    func removeDevice(_ input: Operations.RemoveDevice.Input) async throws -> Operations.RemoveDevice.Output {
        let id = try Self.userID(input.path.id)
        let token: String
        switch DeviceRegistration.normalizedToken(input.path.token) {
        case .success(let normalized): token = normalized
        case .failure(let error): throw Problem.badRequest(error.problem, field: "token")
        }
        guard try await perform({ try await runtime.removeDevice(token: token, of: id) }) else {
            throw Problem.notFound("user \"\(id)\" has no device with this token")
        }
        return .noContent(.init())
    }
}

extension PushEnvironment {
    init(_ environment: Components.Schemas.DeviceRegistration.EnvironmentPayload) {
        switch environment {
        case .sandbox: self = .sandbox
        case .production: self = .production
        }
    }
}

extension Components.Schemas.Device {
    /// A registered device as the API shows it; its `id` is the token.
    init(_ registration: DeviceRegistration) {
        self.init(
            id: registration.token, environment: registration.environment == .sandbox ? .sandbox : .production,
            // The only platform a registration takes (`DeviceRegistration.platforms`).
            platform: .ios, registeredAt: registration.registeredAt.date)
    }
}
