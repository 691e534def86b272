import Hummingbird
import Models
import Runtime
import Storage

/// `POST /v1/users/{id}/events`, with durable idempotency keys. The backend sends with the API
/// key, the user's app with the user's token (`InboxAuthMiddleware`); an app sends what its
/// user does, not what others did (a social event with a user token is 403). The answer carries
/// the local plan's revision after the event (`planVersion`), so the app knows whether to pull
/// its plan; an event from the backend that changes the plan signals the phone (`PlanSignal`).
///
/// The app's idempotency keys and the backend's are kept apart (`scopedKey`): one cannot use up,
/// or replay the answer of, a key of the other. A deprecated legacy user token, which never
/// expires and cannot be revoked, does not send events: 403 here.
extension Routes {
    @Sendable func postEvent(_ request: Request, context: EngagedRequestContext) async throws -> Response {
        let id = try Self.userID(context)
        try Self.refuseLegacyWrite(context, "send events")
        let source: InputSource
        switch context.caller {
        case .user?, .legacyUser?: source = .device
        case .backend?, nil: source = .backend
        }
        let bytes = try await JSONBody.read(request)
        // Two keys would make the answer depend on which one a proxy keeps: refused, not guessed.
        let keys = request.headers.filter { $0.name.canonicalName == "idempotency-key" }.map(\.value)
        guard keys.count <= 1 else {
            throw Problem.badRequest(
                "send one Idempotency-Key header, not \(keys.count)", field: "Idempotency-Key")
        }
        guard let key = keys.first else {
            let event = try JSONBody.decode(EventBody.self, from: bytes)
            try event.check(now: runtime.clock.now(), from: source)
            let applied = try await perform {
                try await runtime.apply(event.input, to: id, occurredAt: event.occurredAt, from: source)
            }
            environment.metrics.eventApplied(event.input)
            return JSONBody.response(
                .accepted, EventAccepted(applied.effects, planVersion: applied.localPlanRevision))
        }
        guard (1...255).contains(key.utf8.count) else {
            throw Problem.badRequest("Idempotency-Key is 1 to 255 characters", field: "Idempotency-Key")
        }
        return try await keyedEvent(bytes, to: id, from: source, key: Self.scopedKey(key, from: source))
    }

    /// The key as the store keeps it: the backend's as sent, the app's behind a prefix with a
    /// control character, which no header value holds, so the two never meet.
    static func scopedKey(_ key: String, from source: InputSource) -> String {
        switch source {
        case .backend: key
        case .device: "device\u{1F}" + key
        }
    }

    /// The runtime looks the key up under its write gate, so a body that reads well costs one
    /// lookup. A body that is refused is a conflict when the key already has an answer (a reused
    /// key with another body, even a malformed one), and the first answer again when its hash is
    /// the same (a retry whose `at` has since become too old). A refused request keeps no record:
    /// sent again with its key, it may now succeed. While another request with the key is being
    /// applied, 409 at once: the runtime's lock of the key is the only one (`WhileKeyRuns.refuse`).
    private func keyedEvent(_ bytes: [UInt8], to id: UserID, from source: InputSource, key: String) async throws
        -> Response
    {
        let hash = RequestHash.of(bytes)
        let event: EventBody
        do {
            event = try JSONBody.decode(EventBody.self, from: bytes)
            try event.check(now: runtime.clock.now(), from: source)
        } catch {
            if let record = try await perform({ try await runtime.idempotencyRecord(userID: id, key: key) }) {
                return try Self.answer(record, requestHash: hash)
            }
            throw error
        }
        let outcome = try await perform {
            try await runtime.apply(
                event.input, to: id, occurredAt: event.occurredAt, from: source, idempotencyKey: key,
                requestHash: hash, whileKeyRuns: .refuse
            ) { effects, planRevision in
                (
                    HTTPResponse.Status.accepted.code,
                    JSONBody.encode(EventAccepted(effects, planVersion: planRevision))
                )
            }
        }
        switch outcome {
        case .applied(let record):
            environment.metrics.eventApplied(event.input)  // a replay is not counted again
            return JSONBody.response(HTTPResponse.Status(code: record.status), bytes: record.response)
        case .replayed(let record), .conflicted(let record):
            return try Self.answer(record, requestHash: hash)
        case .running:
            throw Problem.conflict("a request with this Idempotency-Key is still being processed")
        }
    }

    /// The first answer again (marked `Idempotency-Replayed: true`), or 409 for another body.
    private static func answer(_ record: IdempotencyRecord, requestHash: String) throws -> Response {
        guard record.requestHash == requestHash else {
            throw Problem.conflict("the Idempotency-Key was used with a different body")
        }
        var response = JSONBody.response(HTTPResponse.Status(code: record.status), bytes: record.response)
        response.headers[replayedHeader] = "true"
        return response
    }

    static let replayedHeader = HTTPFields.Element.Name("Idempotency-Replayed")!
}
