import Foundation
import Models

/// One shard's event log: writes each user's lines (events.jsonl) and chains them into the
/// user's digest, and records broken invariants as counts, examples and lines. Throws
/// `SimulationError.eventLog` when the log cannot be written.
struct Journal {
    let sink: EventSink

    /// Writes one event line and chains it into the user's digest.
    func log(
        _ user: inout UserState, _ at: Instant, _ event: StaticString, _ fields: (inout LineBuilder) -> Void = { _ in }
    ) throws {
        do {
            user.digest = try sink.write(
                at: at, user: user.traits.profile.id, event: event, zone: user.zone, chaining: user.digest, fields)
        } catch {
            throw SimulationError.eventLog(error)
        }
    }

    /// Writes what is left of the log and closes it.
    func close() throws {
        do {
            try sink.close()
        } catch {
            throw SimulationError.eventLog(error)
        }
    }

    /// Counts a broken invariant, keeps the first few as examples, and logs it.
    func violation(
        _ violation: Invariant, _ user: inout UserState, at instant: Instant, detail: String, stats: inout ShardStats
    ) throws {
        stats.violations[violation] += 1
        if stats.violationExamples.count < ShardStats.violationExampleLimit {
            stats.violationExamples.append(
                "\(violation.rawValue): user \(user.traits.profile.id) at \(instant) (\(user.zone.formatted(instant))) \(detail)"
            )
        }
        try log(&user, instant, "violation") { $0.id("invariant", violation.rawValue) }
    }

    /// Logs one decision of the engine with its reason and the values that decided.
    func decision(_ entry: TraceEntry, _ user: inout UserState, at now: Instant) throws {
        let zone = user.zone
        try log(&user, now, entry.decision.eventName) {
            $0.id("kind", entry.kind.rawValue)
            $0.id("id", entry.subject)
            if let level = entry.level { $0.id("level", level.rawValue) }
            $0.id("reason", entry.reason.rawValue)
            if let fireAt = entry.fireAt { $0.local(zone, fireAt, name: "fireAt") }
            if let nominal = entry.nominalAt { $0.local(zone, nominal, name: "nominal") }
            if let group = entry.group { $0.id("group", group) }
            if let key = entry.groupKey { $0.field("groupKey", key) }
            if let counted = entry.countedItems { $0.integer("counted", counted) }
            if !entry.detailIsEmpty { $0.detail(of: entry) }
        }
    }
}

extension TraceDecision {
    var eventName: StaticString {
        switch self {
        case .scheduled: "scheduled"
        case .deferred: "deferred"
        case .dropped: "dropped"
        case .suppressed: "suppressed"
        case .cancelled: "cancelled"
        case .folded: "folded"
        case .copyChosen: "copyChosen"
        }
    }
}
