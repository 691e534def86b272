import Delivery
import Engagement
import Models
import Scheduling

/// A user's days in the world loop: each day drawn by the behaviour model, travel to another
/// zone, and the bookkeeping of delivery days and simulated weeks.
extension Shard {
    /// Draws the user's day through the behaviour model and schedules it, or starts a lapse.
    func planDay(_ local: Int, at now: Instant) throws {
        guard !users[local].isAway(at: now.secondsSinceEpoch) else { return }
        var generator = users[local].generator
        let plan = Behaviour.planDay(
            users[local].traits, zone: users[local].zone, at: now, scenario: scenario,
            lastPlannedDate: users[local].lastPlannedDate, socialSequence: &users[local].socialSequence,
            generator: &generator)
        users[local].generator = generator
        switch plan {
        case .lapse(let days, let churns):
            users[local].lapsedUntil = now.secondsSinceEpoch + Int64(days * 86_400)
            users[local].lapseStartedAt = now.secondsSinceEpoch
            users[local].churned = churns
            if churns { drawUninstall(local, at: now) }
            let length = churns ? "forever" : "\(Int(days))"
            try journal.log(&users[local], now, "lapseBegins") { $0.field("days", length) }
        case .alreadyDrawn:
            break
        case .day(let date, let events):
            users[local].lastPlannedDate = date
            for event in events {
                queue.push(time: event.time, user: Int32(local), kind: event.kind)
                if case .activity(.workoutCompleted(let minutes)) = event.kind {
                    scheduleWorkoutActivity(local, endingAt: event.time, minutes: minutes)
                }
            }
        }
    }

    func travel(_ local: Int, at now: Instant) throws {
        var generator = users[local].generator
        let next = Behaviour.destination(
            from: users[local].zone.identifier, among: scenario.timeZones, generator: &generator)
        users[local].generator = generator
        guard let next, let zone = zones[next] else { return }
        users[local].checker.observeZoneChange(from: users[local].zone, to: zone, at: now)
        users[local].zone = zone
        users[local].center.setTimeZone(zone, at: users[local].deviceTime(now))
        try journal.log(&users[local], now, "travel") { $0.id("timeZone", next) }
        try step(local, .timeZoneChanged(zone), at: now)
        // The device's triggers moved with its zone whether or not the kit could report it yet
        // (offline, the report waits in its queue and the step above did nothing).
        rescheduleFire(local)
        scheduleNextDay(local, after: now)
    }

    // MARK: - Bookkeeping

    /// The simulated week an instant falls in (clamped to the run).
    func week(of instant: Instant) -> Int {
        min(scenario.weeks - 1, max(0, Int((instant - scenario.startInstant) / (7 * .secondsPerDay))))
    }

    func countDeliveryDay(_ local: Int, at instant: Instant) {
        if let finished = users[local].countDelivery(on: users[local].zone.localDate(at: instant)) {
            stats.deliveriesPerUserDay[finished, default: 0] += 1
            stats.attention.countDay(finished, heldOut: inPlace(local) { $0.engine.isHeldOutOfBudget })
        }
    }

    func flushDeliveryDay(_ local: Int) {
        if let finished = users[local].endDeliveryDay() {
            stats.deliveriesPerUserDay[finished, default: 0] += 1
            stats.attention.countDay(finished, heldOut: inPlace(local) { $0.engine.isHeldOutOfBudget })
        }
    }

    /// The user's engagement figures for one simulated week, from what they did and received.
    func closeWeek(_ local: Int, week: Int, at now: Instant) {
        let summary = users[local].closeWeek(
            since: scenario.startInstant + Int64(week) * 7 * .secondsPerDay, until: now + 1)
        stats.addWeek(summary, persona: users[local].traits.persona, week: week, of: scenario.weeks)
        if week == scenario.weeks - 1 {
            stats.attention[heldOut: inPlace(local) { $0.engine.isHeldOutOfBudget }]
                .lastWeekByPersona[users[local].traits.persona.position].add(summary)
        }
    }
}
