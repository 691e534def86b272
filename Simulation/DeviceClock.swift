import Delivery
import Engagement
import Models
import Scheduling

/// The device's clock, when it is wrong (`clockCorrectionPerUserDay`, `clockSetByUserPerUserWeek`).
///
/// The engine, the server, APNs and the judge run on true time; only the device's notification
/// center runs on the device's clock, as UNUserNotificationCenter does: a request fires when the
/// device's clock reaches its trigger. The app knows its clock's error (it compares it with the
/// server's at every sync), so it moves each trigger by the error before handing it to the
/// center, to whole minutes because calendar triggers match minutes (`triggerShift`); and when
/// the clock jumps (a network time correction, the user setting it by hand) it hears of it
/// (`UIApplication.significantTimeChangeNotification`) and moves every pending request by the
/// change. A jump forward fires at once what its skipped span held, before the app can move
/// anything, as iOS does: those are counted (`releasedByClockJump`) and judged, like every local
/// delivery, at the time the engine planned them.
enum DeviceClock {
    /// How far the app moves a daily repeating trigger (a wall time of day, minutes only) for a
    /// clock `offsetSeconds` ahead of true time: the offset to the nearest whole minute.
    static func triggerShift(_ offsetSeconds: Int64) -> Int64 {
        let half: Int64 = offsetSeconds >= 0 ? 30 : -30
        return (offsetSeconds + half) / 60 * 60
    }

    /// `request`, meant to fire at true time `fireAt`, as the device must hold it on a clock
    /// `offsetSeconds` ahead, when it held it for `previousOffsetSeconds` (0: as the engine made
    /// it). A one-off fires at `fireAt + offsetSeconds` to the second: a date trigger while the
    /// clock is off (a calendar match names minutes only, and a time already passed by the
    /// rounding would never fire), the engine's own trigger when it is right again. A daily
    /// repeating one moves its time of day by the change of `triggerShift` (carrying its weekday
    /// across midnight). An interval counts from when it is added.
    static func onDeviceClock(
        _ request: NotificationRequest, firingAt fireAt: Instant, offsetSeconds: Int64,
        previousOffsetSeconds: Int64 = 0, in zone: ZoneRules
    ) -> NotificationRequest {
        var moved = request
        switch request.trigger {
        case .timeInterval:
            break
        case .calendar(let match, repeats: true):
            let shiftSeconds = triggerShift(offsetSeconds) - triggerShift(previousOffsetSeconds)
            guard shiftSeconds != 0, match.year == nil, match.month == nil, match.day == nil, let hour = match.hour,
                let minute = match.minute
            else { break }
            let minutes = hour * 60 + minute + Int(shiftSeconds / 60)
            let dayCarry = Int((Double(minutes) / 1_440).rounded(.down))
            let minuteOfDay = minutes - dayCarry * 1_440
            let weekday = match.weekday.map { weekday in
                Weekday(rawValue: ((weekday.rawValue - 1 + dayCarry) % 7 + 7) % 7 + 1)!
            }
            moved.trigger = .calendar(
                CalendarMatch(weekday: weekday, hour: minuteOfDay / 60, minute: minuteOfDay % 60), repeats: true)
        case .date, .calendar(_, repeats: false):
            guard offsetSeconds != 0 || previousOffsetSeconds != 0 else { break }
            moved.trigger =
                offsetSeconds == 0 ? TriggerChoice.trigger(for: fireAt, in: zone) : .date(fireAt + offsetSeconds)
        }
        return moved
    }

    /// The time the engine planned for request `id` (`repeats` or not), added for a clock
    /// `offsetSeconds` ahead and fired at `deviceTime` on it: for a one-off, the instant less the
    /// offset; for a daily series, the occurrence of its time of day (from its identifier)
    /// nearest to when it truly fired (a wall time moved by hours lands an hour off across a DST
    /// change: the clock's error, not the plan's).
    static func trueTime(
        of deviceTime: Instant, id: String, repeats: Bool, offsetSeconds: Int64, in zone: ZoneRules
    ) -> Instant {
        let fired = deviceTime - offsetSeconds
        guard repeats else { return fired }
        guard offsetSeconds != 0, let minute = OccurrenceID(requestID: id)?.minuteOfDay else { return deviceTime }
        let date = zone.localDate(at: fired)
        let nearest = (-1...1).map {
            zone.instant(for: LocalDateTime(date: date.adding(days: $0), secondOfDay: minute * 60))
        }
        .min { abs($0 - fired) < abs($1 - fired) }
        return nearest ?? fired
    }
}

extension UserState {
    /// What the device's clock reads at true time `now`.
    func deviceTime(_ now: Instant) -> Instant { now + clockOffsetSeconds }

    /// The device time from which the center matches `request`'s next firing when the app adds
    /// it at true time `now`: the device's clock, or for a daily series already shown at a later
    /// true time (a jump forward fired it early; a jump back would bring that occurrence round
    /// again) just past that occurrence on the device's clock, so the app re-arms it for the one
    /// after, as its delivered list tells it.
    func addingTime(_ request: NotificationRequest, at now: Instant) -> Instant {
        let deviceNow = deviceTime(now)
        guard request.trigger.repeats, let shown = seriesShown[request.identifier],
            shown + 60 > now.secondsSinceEpoch - 2 * .secondsPerDay
        else { return deviceNow }
        return max(deviceNow, Instant(secondsSinceEpoch: shown) + clockOffsetSeconds + 60)
    }

}

extension Shard {
    /// The scenario's clock faults for the user's day: a network time correction of seconds to
    /// minutes either way, and now and then the user setting the clock by hours, which the
    /// network time puts right some hours later.
    func drawClockJumps(_ local: Int, from dayStart: Instant) {
        let faults = scenario.faults
        if faults.clockCorrectionPerUserDay > 0, users[local].remote.draws.chance(faults.clockCorrectionPerUserDay) {
            let at = dayStart.secondsSinceEpoch + Int64(users[local].remote.draws.int(in: 0...86_399))
            let seconds = users[local].remote.draws.int(in: 1...300) * (users[local].remote.draws.chance(0.5) ? 1 : -1)
            queue.push(time: at, user: Int32(local), kind: .clockJump(bySeconds: Int32(seconds)))
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

    /// The device's clock jumps by `seconds` at true time `now`. A jump forward first fires what
    /// the skipped span held (judged at the times the engine planned them); then the app moves
    /// every pending request by the change of its trigger shift, so each fires at its planned
    /// true time again.
    func jumpClock(_ local: Int, bySeconds seconds: Int64, at now: Instant) throws {
        stats.clockJumps += 1
        let oldOffset = users[local].clockOffsetSeconds
        let offset = oldOffset + seconds
        // What is due at this very instant fires first, on time (the jump comes after it).
        let due = users[local].center.fireDue(through: now + oldOffset)
        try deliverLocal(local, due, offsetSeconds: oldOffset, at: now)
        // An occurrence is never planned more than a day after its time: two days of memory.
        users[local].releasedEarly = users[local].releasedEarly.filter {
            $0.value > now.secondsSinceEpoch - 2 * .secondsPerDay
        }
        if seconds > 0 {
            let released = users[local].center.fireDue(through: now + offset)
            stats.releasedByClockJump += released.count
            for notification in released {
                users[local].releasedEarly[notification.request.identifier] =
                    DeviceClock.trueTime(
                        of: notification.deliveredAt, id: notification.request.identifier,
                        repeats: notification.request.trigger.repeats, offsetSeconds: oldOffset, in: users[local].zone
                    ).secondsSinceEpoch
            }
            try deliverLocal(local, released, offsetSeconds: oldOffset, releasedEarly: true, at: now)
        }
        users[local].clockOffsetSeconds = offset
        let deviceNow = users[local].deviceTime(now)
        if offset != oldOffset {
            for pending in users[local].center.pendingNotificationRequests {
                let trueFire = DeviceClock.trueTime(
                    of: pending.nextFire, id: pending.request.identifier, repeats: pending.request.trigger.repeats,
                    offsetSeconds: oldOffset, in: users[local].zone)
                var moved = DeviceClock.onDeviceClock(
                    pending.request, firingAt: trueFire, offsetSeconds: offset, previousOffsetSeconds: oldOffset,
                    in: users[local].zone)
                // Moved to a time the device's clock has passed (by the rounding to minutes): now.
                if moved.trigger.nextFire(after: deviceNow, scheduledAt: deviceNow, in: users[local].zone) == nil {
                    moved.trigger = .date(deviceNow + 1)
                }
                do {
                    try users[local].center.add(moved, at: users[local].addingTime(moved, at: now))
                } catch {
                    // Notifications are off: the app withdraws it and tells the engine, as when
                    // a schedule is refused.
                    users[local].center.removePendingNotificationRequests(withIdentifiers: [moved.identifier])
                    users[local].refusalToReport = true
                }
            }
        }
        if users[local].refusalToReport {
            users[local].refusalToReport = false
            try step(local, .notificationPermission(allowed: false), at: now)
        }
        try journal.log(&users[local], now, "clockJump") { $0.field("seconds", "\(seconds)") }
        rescheduleFire(local)
    }

    /// After a change of zone while the device's clock is off: its one-offs are date triggers,
    /// which keep their instants, while the engine re-times wall-clock reminders in the new zone;
    /// the app (told by `NSSystemTimeZoneDidChange`) moves each one-off request onto the engine's
    /// plan, on the device's clock.
    func resyncAfterZoneChange(_ local: Int, at now: Instant) {
        let offset = users[local].clockOffsetSeconds
        guard offset != 0 else { return }
        var believed: [String: Instant] = [:]
        for item in users[local].engine.planned where !item.repeatsDaily { believed[item.id.description] = item.fireAt }
        let deviceNow = users[local].deviceTime(now)
        for pending in users[local].center.pendingNotificationRequests where !pending.request.trigger.repeats {
            guard let fireAt = believed[pending.request.identifier], fireAt > now, pending.nextFire - offset != fireAt
            else { continue }
            var moved = pending.request
            moved.trigger = .date(fireAt + offset)
            do {
                try users[local].center.add(moved, at: deviceNow)
            } catch {
                // Notifications are off: withdrawn, and the engine told (by the step this is in).
                users[local].center.removePendingNotificationRequests(withIdentifiers: [moved.identifier])
                users[local].refusalToReport = true
            }
        }
        rescheduleFire(local)
    }
}
