import EngagedAPI
import Engagement
import Foundation
import LiveActivity
import Models
import Runtime
import Scheduling

// The JSON shapes of the API (Modules/EngagedAPI/openapi.yaml describes the same). Requests refuse unknown keys;
// values the engine has types for decode through the engine's own Codable conformances, so the
// server validates exactly as the engine does and names the same fields.

extension Components.Schemas.Schedule {
    /// `GET /v1/users/{id}/schedule`: what the engine has planned, soonest first, in one page
    /// (at most the 64 pending requests): `nextCursor` is always null.
    init(_ engine: UserEngine) {
        let zone = engine.zone
        self.init(
            items: zip(engine.plannedRequestIDs, engine.plannedFireTimes).map { id, fireAt in
                let kind = OccurrenceID(requestID: id)?.kind
                return Components.Schemas.ScheduleItem(
                    id: id, kind: kind?.rawValue ?? "unknown",
                    // `local`: the app puts it in the device's pending list, the server only files it
                    // in the inbox when due; `remote`: the server pushes it when due (`ChannelPolicy`).
                    channel: kind.flatMap { .init(rawValue: ChannelPolicy.channel(for: $0).rawValue) } ?? .unknown,
                    fireAt: fireAt.date, localTime: zone.formatted(fireAt))
            },
            nextCursor: Nullable(nil), timeZone: zone.identifier)
    }
}
