import Delivery
import Engagement
import Models
import Scheduling

/// The check behind `planMatchesPlatform`: what the engine believes pending on the device (its
/// plan's local-channel requests; remote kinds go by push) against the device's pending list.
///
/// Compared after a step: how many requests each side holds, the fire times of the one-off
/// requests in order, and each identifier the step scheduled (held at its fire time) or
/// cancelled (no longer held). Requests due at or before the step's instant are left out on
/// both sides: the device fires them at that instant's fire event and the engine retires them at
/// its next input. A daily series is compared by its identifier only: the device re-arms it at
/// its own next match, the engine moves it on at its next input. The device's times are on its
/// clock: `deviceOffsetSeconds` (the clock's error, which the app adds to one-offs, `DeviceClock`)
/// takes them back.
/// A request a jump of the clock fired ahead of its time (`releasedEarly`) is shown already: the
/// engine counts it pending until its time, the device no longer holds it.
/// `pending` holds each identifier once, as the platform does (adding a request replaces the
/// one with its identifier): a scheduled request is found where it should be, by its time and
/// identifier, before it is looked for by identifier alone.
enum PlatformAgreement {
    /// The first difference, for a person; nil when the two agree.
    static func difference(
        planned: [PlannedNotification], pending: [PendingNotification], effects: [Effect], now: Instant,
        deviceOffsetSeconds offset: Int64 = 0, releasedEarly: [RequestID: Int64] = [:]
    ) -> String? {
        var believed: [Instant] = []
        believed.reserveCapacity(planned.count)
        var believedSeries = 0
        for item in planned where ChannelPolicy.channel(for: item.kind) == .local {
            if item.repeatsDaily {
                believedSeries += 1
            } else if item.fireAt > now, releasedEarly.isEmpty || releasedEarly[item.id.requestID] == nil {
                believed.append(item.fireAt)
            }
        }
        var held: [Instant] = []
        held.reserveCapacity(pending.count)
        var heldSeries = 0
        // By index, reading fields in place: a copy of each pending request (its strings) would
        // cost more than the check.
        for index in pending.indices {
            if pending[index].request.trigger.repeats
                || (offset != 0 && DeviceClock.isDailySeries(pending[index].request))
            {
                heldSeries += 1
            } else if pending[index].nextFire - offset > now {
                held.append(pending[index].nextFire - offset)
            }
        }
        if believedSeries != heldSeries {
            return "the engine believes \(believedSeries) daily series pending, the device holds \(heldSeries)"
        }
        if believed.count != held.count {
            return "the engine believes \(believed.count) requests pending, the device holds \(held.count)"
        }
        believed.sort()
        if let index = believed.indices.first(where: { believed[$0] != held[$0] }) {
            return "the engine believes a request fires at \(believed[index].iso8601), the device has "
                + "\(held[index].iso8601) in its place"
        }
        // The last word on each identifier in the step (a later pass may withdraw what an
        // earlier one scheduled): its fire time, or nil when cancelled. A step names a handful of
        // identifiers, so a list searched from its end beats hashing each identifier.
        var lastWords: [(id: RequestID, word: (fireAt: Instant, repeats: Bool)?)] = []
        func say(_ id: RequestID, _ word: (fireAt: Instant, repeats: Bool)?) {
            if let index = lastWords.lastIndex(where: { $0.id == id }) {
                lastWords[index].word = word
            } else {
                lastWords.append((id, word))
            }
        }
        for effect in effects {
            switch effect {
            case .schedule(let request, let fireAt, .local):
                say(request.identifier, (fireAt, request.trigger.repeats))
            case .cancel(let ids):
                for id in ids { say(id, nil) }
            default: break
            }
        }
        for (id, word) in lastWords {
            guard let word else {
                if pending.contains(where: { $0.request.identifier == id }) {
                    return "\(id) was cancelled but the device still holds it"
                }
                continue
            }
            guard word.repeats || word.fireAt > now, word.repeats || releasedEarly[id] == nil else { continue }
            // Where the device holds it as scheduled, its time is the one told: look there first.
            if !word.repeats,
                pending.contains(where: { $0.nextFire - offset == word.fireAt && $0.request.identifier == id })
            {
                continue
            }
            guard let found = pending.firstIndex(where: { $0.request.identifier == id }).map({ pending[$0].nextFire })
            else {
                return "\(id) was scheduled but the device does not hold it"
            }
            if !word.repeats && found - offset != word.fireAt {
                return
                    "\(id) was scheduled for \(word.fireAt.iso8601), the device fires it at \((found - offset).iso8601)"
            }
        }
        return nil
    }
}

extension Shard {
    /// Checks `planMatchesPlatform` after a step whose effects touched the device's pending
    /// list, or (`always`) after the device changed on its own (a change of zone, a relaunch).
    func checkPlanMatchesPlatform(_ local: Int, after effects: [Effect], at now: Instant, always: Bool = false) throws {
        guard
            always || effects.contains(where: \.changesThePlan)
        else { return }
        guard
            let difference = PlatformAgreement.difference(
                planned: users[local].engine.planned, pending: users[local].center.pendingNotificationRequests,
                effects: effects, now: now, deviceOffsetSeconds: users[local].clockOffsetSeconds,
                releasedEarly: users[local].releasedEarly)
        else { return }
        try journal.violation(.planMatchesPlatform, &users[local], at: now, detail: difference, stats: &stats)
    }
}
