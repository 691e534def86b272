import EngagedAPI
import EngagedClient
public import EngagementKit
public import Foundation
import LiveActivity
public import Models
import OpenAPIRuntime

/// `EventQueue`'s sender on the generated client: `POST /v1/users/{id}/events` with the event's
/// idempotency key and the user's token (renewed once on a 401 or 403, `UserCredential`).
///
/// The queued body is read as the document's `Event` and written again by the client; both
/// write sorted keys and instants in whole seconds, so the bytes sent are the bytes the queue
/// keeps (`AppEvent.body`), as the server's comparison of a key's bodies needs. A body the
/// document does not read (a hand-made one, an event type this build's client lacks) is never
/// sent: it is answered 400, as the server answers such a body, so the queue drops it and
/// reports it (`FlushReport.dropped`) instead of holding up the events behind it.
///
/// A 202 whose body cannot be read still counts as sent (the server applied the event), with no
/// plan version or Live Activities. Any other answer is the queue's to judge by its status, with
/// `Retry-After` when it has one; no answer at all throws, and the queue retries.
public struct EngagedEventSender: EventSender {
    public let connection: EngagedConnection

    public init(_ connection: EngagedConnection) { self.connection = connection }

    public func send(_ body: Data, idempotencyKey: String, userID: UserID) async throws -> EventAnswer {
        let event: Components.Schemas.Event
        do { event = try Self.decoder.decode(Components.Schemas.Event.self, from: body) } catch {
            return EventAnswer(status: 400)
        }
        let (output, answer) = try await connection.exchange { client in
            try await client.postEvent(
                path: .init(id: userID.rawValue), headers: .init(idempotencyKey: idempotencyKey), body: .json(event))
        }
        guard case .accepted(let accepted)? = output, let json = try? accepted.body.json else {
            return EventAnswer(status: answer.status, retryAfterSeconds: answer.retryAfterSeconds)
        }
        return EventAnswer(
            status: answer.status, planVersion: json.planVersion,
            liveActivities: (json.liveActivities ?? []).map { change in
                LiveActivityChange(activityID: change.activityID, event: Self.event(of: change.event))
            })
    }

    static func event(
        of event: Components.Schemas.EventAccepted.LiveActivitiesPayloadPayload.EventPayload
    ) -> LiveActivityCommand.Event {
        switch event {
        case .start: .start
        case .update: .update
        case .end: .end
        }
    }

    /// Reads a queued body as the generated code reads JSON: instants by `APIDateTranscoder`.
    static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        let transcoder = APIDateTranscoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            try transcoder.decode(try decoder.singleValueContainer().decode(String.self))
        }
        return decoder
    }
}
