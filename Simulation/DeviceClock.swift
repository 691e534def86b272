import Delivery
import Engagement
import Models
import Scheduling

/// The device's clock, when it is wrong (`clockCorrectionPerUserDay`, `clockSetByUserPerUserWeek`).
///
/// The engine, the server, APNs and the judge run on true time; only the device's notification
/// center runs on the device's clock, as UNUserNotificationCenter does: a request fires when the
/// device's clock reaches its trigger. The app knows its clock's error (it compares it with the
/// server's at every sync). While the clock is off, it holds every request as a one-off date
/// trigger at its planned true time plus the error, to the second: a calendar match names minutes
/// only, and a daily series' wall time moved by hours would fire an hour off, or twice, across a
/// DST change; so a series is held one occurrence at a time, and the app adds the next when one
/// fires. When the clock jumps (a network time correction, the user setting it by hand) the app
/// hears of it (`UIApplication.significantTimeChangeNotification`) and moves every pending
/// request; when it is right again, requests go back to the engine's own triggers. A jump forward
/// fires at once what its skipped span held, before the app can move anything, as iOS does: those
/// are counted (`releasedByClockJump`), judged for what they are, not for when
/// (`ObservedDelivery.releasedEarly`), at the time the engine planned them, and never added again.
enum DeviceClock {
    /// Whether `request` is a daily series, held as a repeating trigger or, while the clock is
    /// off, one occurrence at a time.
    static func isDailySeries(_ request: NotificationRequest) -> Bool {
        if request.trigger.repeats { return true }
        // Held one occurrence at a time only as a date trigger: parse only those.
        guard case .date = request.trigger else { return false }
        return OccurrenceID(requestID: request.identifier)?.isDailySeries ?? false
    }

    /// `request`, meant to fire (next) at true time `fireAt`, as the device must hold it on a
    /// clock `offsetSeconds` ahead: while the clock is off, a date trigger at `fireAt +
    /// offsetSeconds`; when it is right, the engine's own trigger (a daily series' repeating
    /// match, rebuilt from its identifier; a one-off's calendar match or date). An interval
    /// counts from when it is added.
    static func onDeviceClock(
        _ request: NotificationRequest, firingAt fireAt: Instant, offsetSeconds: Int64, in zone: ZoneRules
    ) -> NotificationRequest {
        if case .timeInterval = request.trigger { return request }
        var moved = request
        if offsetSeconds != 0 {
            moved.trigger = .date(fireAt + offsetSeconds)
        } else if isDailySeries(request) {
            if !request.trigger.repeats, let minute = OccurrenceID(requestID: request.identifier)?.minuteOfDay {
                moved.trigger = .calendar(.daily(at: LocalTimeOfDay(minutesSinceMidnight: minute)), repeats: true)
            }
        } else {
            // As the engine makes it (`EngineCopy`): a calendar match on the minute, else a date.
            moved.trigger = TriggerChoice.trigger(for: fireAt, in: zone)
        }
        return moved
    }

    /// The next occurrence of daily series `id` after the one at `occurrence` (true time): its
    /// time of day on the next local date.
    static func nextOccurrence(of id: RequestID, after occurrence: Instant, in zone: ZoneRules) -> Instant? {
        guard let minute = OccurrenceID(requestID: id)?.minuteOfDay else { return nil }
        let date = zone.localDate(at: occurrence).adding(days: 1)
        return zone.instant(for: LocalDateTime(date: date, secondOfDay: minute * 60))
    }
}

extension UserState {
    /// What the device's clock reads at true time `now`.
    func deviceTime(_ now: Instant) -> Instant { now + clockOffsetSeconds }

    /// The device time from which the center matches `request`'s next firing when the app adds
    /// it at true time `now`: the device's clock, or for a repeating series already shown at a
    /// later true time (a jump forward fired it early, then the clock came right) just past that
    /// occurrence, so the app re-arms it for the one after, as its delivered list tells it.
    func addingTime(_ request: NotificationRequest, at now: Instant) -> Instant {
        let deviceNow = deviceTime(now)
        guard request.trigger.repeats, let shown = seriesShown[request.identifier] else { return deviceNow }
        return max(deviceNow, Instant(secondsSinceEpoch: shown) + clockOffsetSeconds + 60)
    }

    /// The true time the next occurrence of series `id` should fire, given the engine's `fireAt`:
    /// the one after the occurrence last shown when that one was shown already.
    func seriesFire(_ id: RequestID, plannedAt fireAt: Instant) -> Instant {
        guard let shown = seriesShown[id], shown >= fireAt.secondsSinceEpoch else { return fireAt }
        return DeviceClock.nextOccurrence(of: id, after: Instant(secondsSinceEpoch: shown), in: zone) ?? fireAt
    }
}

extension Shard {
    /// The scenario's clock faults for the user's day: a network time correction of seconds to
    /// minutes either way, and now and then the user setting the clock by hours, which the
    /// network time puts right some hours later.
    func drawClockJumps(_ local: Int, from dayStart: Instant) {
        let faults = scenario.faults
        if faults.clockCorrectionPerUserDay > 0, users[local].remote.draws.chance(faults.clockCorrectionPerUserDay) {
            // The clock drifted off (offline, its battery flat) and the network corrects it
            // hours later: two jumps, the second the correction.
            let at = dayStart.secondsSinceEpoch + Int64(users[local].remote.draws.int(in: 0...86_399))
            let seconds = users[local].remote.draws.int(in: 1...300) * (users[local].remote.draws.chance(0.5) ? 1 : -1)
            let correctedAfter = max(600, Int64(users[local].remote.draws.exponential(mean: 6) * 3_600))
            queue.push(time: at, user: Int32(local), kind: .clockJump(bySeconds: Int32(seconds)))
            queue.push(time: at + correctedAfter, user: Int32(local), kind: .clockJump(bySeconds: Int32(-seconds)))
        }
        if faults.clockSetByUserPerUserWeek > 0, users[local].remote.draws.chance(faults.clockSetByUserPerUserWeek / 7)
        {
            let at = dayStart.secondsSinceEpoch + Int64(users[local].remote.draws.int(in: 0...86_399))
            let hours = users[local].remote.draws.int(in: 1...12) * (users[local].remote.draws.chance(0.5) ? 1 : -1)
            let restoredAfter = max(3_600, Int64(users[local].remote.draws.exponential(mean: 12) * 3_600))
            queue.push(time: at, user: Int32(local), kind: .clockJump(bySeconds: Int32(hours * 3_600)))
            queue.push(time: at + restoredAfter, user: Int32(local), kind: .clockJump(bySeconds: Int32(-hours * 3_600)))
        }
    }

    /// The device's clock jumps by `seconds` at true time `now`. What is due at this instant
    /// fires first; a jump forward then fires what the skipped span held; then the app moves
    /// every pending request onto the new clock (`DeviceClock.onDeviceClock`), so each fires at
    /// its planned true time again.
    func jumpClock(_ local: Int, bySeconds seconds: Int64, at now: Instant) throws {
        stats.clockJumps += 1
        let oldOffset = users[local].clockOffsetSeconds
        let offset = oldOffset + seconds
        let due = users[local].center.fireDue(through: now + oldOffset)
        try deliverLocal(local, due, offsetSeconds: oldOffset, at: now)
        // An occurrence is never planned more than a day after its time: two days of memory.
        users[local].releasedEarly = users[local].releasedEarly.filter {
            $0.value > now.secondsSinceEpoch - 2 * .secondsPerDay
        }
        if seconds > 0 {
            let released = users[local].center.fireDue(through: now + offset)
            stats.releasedByClockJump += released.count
            try deliverLocal(local, released, offsetSeconds: oldOffset, releasedEarly: true, at: now)
        }
        users[local].clockOffsetSeconds = offset
        var believed: [RequestID: Instant] = [:]
        for item in appBelieves(local) where item.repeatsDaily { believed[item.id] = item.fireAt }
        if offset == 0 { users[local].heldSeries = [:] }
        for pending in users[local].center.pendingNotificationRequests {
            let series = DeviceClock.isDailySeries(pending.request)
            if series && offset != 0 { users[local].heldSeries[pending.request.identifier] = pending.request }
            // A series held as a repeating trigger fires next as the engine planned it.
            let trueFire =
                series && pending.request.trigger.repeats
                ? users[local].seriesFire(
                    pending.request.identifier, plannedAt: believed[pending.request.identifier] ?? pending.nextFire)
                : pending.nextFire - oldOffset
            let moved = DeviceClock.onDeviceClock(
                pending.request, firingAt: trueFire, offsetSeconds: offset, in: users[local].zone)
            addToDevice(local, moved, at: now)
        }
        try reportRefusal(local, at: now)
        try journal.log(&users[local], now, "clockJump") { $0.field("seconds", "\(seconds)") }
        rescheduleFire(local)
    }

    /// The app adds `request` to the device at true time `now`. One the device's clock has
    /// passed already fires at once (it was due now); refused (notifications off), it is
    /// withdrawn and the engine is told by the step this is in (`refusalToReport`).
    func addToDevice(_ local: Int, _ request: NotificationRequest, at now: Instant) {
        let deviceNow = inPlace(local) { $0.deviceTime(now) }
        var request = request
        if case .date(let at) = request.trigger, at <= deviceNow { request.trigger = .date(deviceNow + 1) }
        do {
            let addedAt = inPlace(local) { $0.addingTime(request, at: now) }
            try users[local].center.add(request, at: addedAt)
        } catch {
            users[local].withdrawRefused(request.identifier)
        }
    }

    /// While the clock is off a daily series is held one occurrence at a time: when one fires
    /// (at `occurrence`, true time), the app adds the next, if the engine still plans the series.
    func rearmSeries(_ local: Int, _ request: NotificationRequest, after occurrence: Instant, at now: Instant) {
        guard !request.trigger.repeats, DeviceClock.isDailySeries(request),
            appBelieves(local).contains(where: { $0.repeatsDaily && $0.id == request.identifier }),
            let next = DeviceClock.nextOccurrence(of: request.identifier, after: occurrence, in: users[local].zone)
        else { return }
        addToDevice(
            local,
            DeviceClock.onDeviceClock(
                request, firingAt: next, offsetSeconds: users[local].clockOffsetSeconds, in: users[local].zone),
            at: now)
    }

    /// After a change of zone while the device's clock is off: its requests are date triggers,
    /// which keep their instants, while the engine re-times wall-clock reminders (and moves its
    /// series) in the new zone; the app (told by `NSSystemTimeZoneDidChange`) moves each pending
    /// request onto the engine's plan, on the device's clock.
    func resyncAfterZoneChange(_ local: Int, at now: Instant) {
        let offset = users[local].clockOffsetSeconds
        guard offset != 0 else { return }
        var believed: [RequestID: Instant] = [:]
        for item in appBelieves(local) { believed[item.id] = item.fireAt }
        for pending in users[local].center.pendingNotificationRequests {
            let id = pending.request.identifier
            guard let planned = believed[id] else { continue }
            let fireAt =
                DeviceClock.isDailySeries(pending.request) ? users[local].seriesFire(id, plannedAt: planned) : planned
            guard fireAt > now, pending.nextFire - offset != fireAt else { continue }
            addToDevice(
                local,
                DeviceClock.onDeviceClock(
                    pending.request, firingAt: fireAt, offsetSeconds: offset, in: users[local].zone),
                at: now)
        }
        rescheduleFire(local)
    }

    /// While the clock is off, the app checks at every run that the device holds the next
    /// occurrence of each series the engine plans (one fired while notifications were off is
    /// consumed unseen, so it was never re-armed), and adds what is missing.
    func holdSeries(_ local: Int, at now: Instant) {
        guard users[local].clockOffsetSeconds != 0, !users[local].heldSeries.isEmpty else { return }
        for item in appBelieves(local) where item.repeatsDaily {
            let id = item.id
            guard let request = users[local].heldSeries[id],
                !users[local].center.pendingNotificationRequests.contains(where: { $0.request.identifier == id })
            else { continue }
            let fireAt = users[local].seriesFire(id, plannedAt: item.fireAt)
            addToDevice(
                local,
                DeviceClock.onDeviceClock(
                    request, firingAt: fireAt, offsetSeconds: users[local].clockOffsetSeconds, in: users[local].zone),
                at: now)
            rescheduleFire(local)
        }
    }
}
