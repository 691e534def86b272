import EngagedAPI
import Engagement
import Foundation
import HTTPTypes
import LiveActivity
import Models
import OpenAPIRuntime
import Runtime
import Storage

/// `POST /v1/users/{id}/events`, with durable idempotency keys. The backend sends with the API
/// key, the user's app with the user's token; an app sends what its user does, not what others
/// did (a social event with a user token is 403). The answer carries the local plan's revision
/// after the event (`planVersion`), so the app knows whether to pull its plan; an event from the
/// backend that changes the plan signals the phone (`PlanSignal`).
///
/// The app's idempotency keys and the backend's are kept apart (`scopedKey`): one cannot use up,
/// or replay the answer of, a key of the other. A deprecated legacy user token, which never
/// expires and cannot be revoked, does not send events: 403 here.
extension Routes {
    func postEvent(_ input: Operations.PostEvent.Input) async throws -> Operations.PostEvent.Output {
        let id = try Self.userID(input.path.id)
        let source = EventKey.source(of: RequestScope.caller)
        let body =
            switch input.body {
            case .json(let body): body
            }  // the only media type the document takes
        let event = try EventInput(body)
        try event.check(now: runtime.clock.now(), from: source)
        guard let key = try EventKey.scoped(RequestScope.headerFields, from: source) else {
            let applied = try await perform {
                try await runtime.apply(event.input, to: id, occurredAt: event.occurredAt, from: source)
            }
            environment.metrics.eventApplied(event.input)
            return .accepted(.init(body: .json(.init(applied.effects, planVersion: applied.localPlanRevision))))
        }
        let hash = RequestHash.of(RequestScope.bodyBytes)
        let outcome = try await perform {
            try await runtime.apply(
                event.input, to: id, occurredAt: event.occurredAt, from: source, idempotencyKey: key,
                requestHash: hash, whileKeyRuns: .refuse
            ) { effects, planRevision in
                (
                    Self.eventAcceptedStatus,
                    JSONBody.encode(Components.Schemas.EventAccepted(effects, planVersion: planRevision))
                )
            }
        }
        switch outcome {
        case .applied(let record):
            environment.metrics.eventApplied(event.input)  // a replay is not counted again
            return .accepted(.init(body: .json(try Self.storedAnswer(record))))
        case .replayed(let record), .conflicted(let record):
            return try Self.replay(record, requestHash: hash)
        case .running:
            throw Problem.conflict("a request with this Idempotency-Key is still being processed")
        }
    }

    /// The status every stored answer has: only an accepted event is kept under its key.
    static let eventAcceptedStatus = 202

    /// The first answer again (marked `Idempotency-Replayed: true`), or 409 for another body.
    static func replay(_ record: IdempotencyRecord, requestHash: String) throws -> Operations.PostEvent.Output {
        try requireSameBody(record, requestHash: requestHash)
        return .accepted(.init(headers: .init(idempotencyReplayed: ._true), body: .json(try storedAnswer(record))))
    }

    /// 409 when the record's key came with another body.
    static func requireSameBody(_ record: IdempotencyRecord, requestHash: String) throws(Problem) {
        guard record.requestHash == requestHash else {
            throw Problem.conflict("the Idempotency-Key was used with a different body")
        }
    }

    /// The typed answer a record keeps (its JSON, as the first request's answer wrote it).
    static func storedAnswer(_ record: IdempotencyRecord) throws -> Components.Schemas.EventAccepted {
        guard record.status == eventAcceptedStatus else {
            throw APIAnswerError(detail: "an idempotency record with status \(record.status)")
        }
        return try JSONDecoder().decode(Components.Schemas.EventAccepted.self, from: Data(record.response))
    }
}

/// The `Idempotency-Key` of an event, as the store keeps it.
enum EventKey {
    /// The backend's events, or the phone's own (`InputSource`).
    static func source(of caller: Caller?) -> InputSource {
        switch caller {
        case .user?, .legacyUser?: .device
        case .backend?, nil: .backend
        }
    }

    /// The key of `fields`, scoped to `source`; nil without one. Read as written (the header
    /// lines as they came, never percent-decoded): two keys would make the answer depend on
    /// which one a proxy keeps, so they are refused, not guessed; 400 naming the header.
    static func scoped(_ fields: HTTPFields, from source: InputSource) throws(Problem) -> String? {
        let keys = fields[values: idempotencyKey]
        guard keys.count <= 1 else {
            throw Problem.badRequest("send one Idempotency-Key header, not \(keys.count)", field: "Idempotency-Key")
        }
        guard let key = keys.first else { return nil }
        guard (1...255).contains(key.utf8.count) else {
            throw Problem.badRequest("Idempotency-Key is 1 to 255 characters", field: "Idempotency-Key")
        }
        return scopedKey(key, from: source)
    }

    /// The key as the store keeps it: the backend's as sent, the app's behind a prefix with a
    /// control character, which no header value holds, so the two never meet.
    static func scopedKey(_ key: String, from source: InputSource) -> String {
        switch source {
        case .backend: key
        case .device: "device\u{1F}" + key
        }
    }

    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!
    /// `Idempotency-Replayed: true` marks a stored first answer sent again.
    static let replayedHeader = HTTPField.Name("Idempotency-Replayed")!
}

/// A keyed event whose body is refused (it does not decode, or its values are out of range) is
/// a conflict when its key already has an answer (a reused key with another body, even a
/// malformed one), and the first answer again when its hash is the same (a retry whose `at` has
/// since become too old). A refused request keeps no record: sent again with its key, it may
/// now succeed. The body is refused in front of the handler (strict JSON, the generated
/// decoder) or in it, so this middleware wraps both; a body that reads well costs no lookup here.
struct EventReplayMiddleware: ServerMiddleware {
    let runtime: EngineRuntime

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        guard operationID == "postEvent" else { return try await next(request, body, metadata) }
        var bytes: [UInt8] = []
        if let body { bytes = Array(try await ArraySlice(collecting: body, upTo: JSONBody.maxBytes)) }
        do {
            return try await next(request, HTTPBody(bytes), metadata)
        } catch {
            // Only a refused body or value: authentication, the path and the key were checked
            // before this middleware ran (`AuthenticationMiddleware`, `RawRequestMiddleware`).
            guard let refused = Problem.clientProblem(error)?.status,
                [.badRequest, .forbidden, .unprocessableContent].contains(refused),
                let key = try? EventKey.scoped(request.headerFields, from: EventKey.source(of: RequestScope.caller)),
                let id = metadata.pathParameters["id"].map({ UserID(String($0)) })
            else { throw error }
            guard let record = try await runtime.idempotencyRecord(userID: id, key: key) else { throw error }
            try Routes.requireSameBody(record, requestHash: RequestHash.of(bytes))
            // The first answer as it was written: the handler, which writes answers, did not run.
            guard record.status == Routes.eventAcceptedStatus else {
                throw APIAnswerError(detail: "an idempotency record with status \(record.status)")
            }
            var response = HTTPResponse(status: .accepted)
            response.headerFields[.contentType] = "application/json; charset=utf-8"
            response.headerFields[EventKey.replayedHeader] = "true"
            return (response, HTTPBody(record.response))
        }
    }
}

extension Components.Schemas.EventAccepted {
    /// The answer to an event: how many effects its step had, the local plan's revision after it
    /// (`UserEngine.localPlanRevision`, the plan's `version`, which an app compares with the one
    /// it holds), and its Live Activity commands (an app starts the activity a `start` names and
    /// reports its push token under that name).
    init(_ effects: [Effect], planVersion: Int) {
        self.init(
            effects: effects.count, planVersion: planVersion,
            liveActivities: effects.compactMap { effect in
                guard case .liveActivity(let command) = effect else { return nil }
                return .init(activityID: command.activityID, event: .init(command.event))
            })
    }
}

extension Components.Schemas.EventAccepted.LiveActivitiesPayloadPayload.EventPayload {
    init(_ event: LiveActivityCommand.Event) {
        switch event {
        case .start: self = .start
        case .update: self = .update
        case .end: self = .end
        }
    }
}
