import EngagedAPI
import Engagement
import Foundation
import Models
import Runtime
import Scheduling

extension Routes {
    /// What the engine has planned for the user, soonest first; 404 for an unknown user.
    func getSchedule(_ input: Operations.GetSchedule.Input) async throws -> Operations.GetSchedule.Output {
        let id = try Self.userID(input.path.id)
        guard let engine = try await perform({ try await runtime.engine(of: id) }) else {
            throw Problem.notFound("no user \"\(id)\"")
        }
        return .ok(.init(body: .json(Components.Schemas.Schedule(engine))))
    }
}

extension Components.Schemas.Schedule {
    /// `GET /v1/users/{id}/schedule`: what the engine has planned, soonest first, in one page
    /// (at most the 64 pending requests): `nextCursor` is always null.
    init(_ engine: UserEngine) {
        let zone = engine.zone
        self.init(
            items: zip(engine.plannedRequestIDs, engine.plannedFireTimes).map { id, fireAt in
                let kind = OccurrenceID(requestID: id)?.kind
                return Components.Schemas.ScheduleItem(
                    id: id.rawValue, kind: kind?.rawValue ?? "unknown",
                    // `local`: the app puts it in the device's pending list, the server only files it
                    // in the inbox when due; `remote`: the server pushes it when due (`ChannelPolicy`).
                    channel: kind.flatMap { .init(rawValue: ChannelPolicy.channel(for: $0).rawValue) } ?? .unknown,
                    fireAt: fireAt.date, localTime: zone.formatted(fireAt))
            },
            nextCursor: Nullable(nil), timeZone: zone.identifier)
    }
}
