import Content
import Engagement
public import Models
import Scheduling

/// Per-user invariant state: rebuilt from what was delivered, independently of the engine's
/// own bookkeeping, so an engine bug cannot hide itself.
public struct InvariantChecker: Sendable {
    private var capped: [Int64] = []
    /// Latest staleness deadline of each scheduled request, from the engine's traces.
    private var deadlines = FiringMap<Deadline>()
    /// Folded item -> the group it is in now; group -> its key; items already delivered in a group.
    private var groupOfItem: [RequestKey: RequestKey] = [:]
    private var itemsOfGroup: [RequestKey: Set<RequestKey>] = [:]
    private var keyOfGroup: [RequestKey: String] = [:]
    private var sendAtOfGroup: [RequestKey: Int64] = [:]
    private var deliveredItems = FiringMap<Int64>()
    /// Things the user did, with when: a meal logged, a workout done (any that day).
    private var done: [DoneThing: Int64] = [:]
    /// Deliveries (a request, and for a repeating one the firing), with when; identifiers carry
    /// their local date and nothing is sent more than a day late, so a week of memory catches
    /// every duplicate.
    private var deliveredIDs = FiringMap<Int64>()
    private var morningDates: Set<LocalDate> = []
    /// The last delivery instant per kind (by ordinal): a user's deliveries come in time order.
    private var lastInstantOfKind = [Int64](repeating: .min, count: NotificationKind.allCases.count)
    /// Attempts of nudges delivered since the user's last activity (an app event or an answer
    /// other than dismiss and snooze).
    private var nudgesThisAbsence: [Int] = []
    /// Local minutes of the last 20 app opens since the last change of zone.
    private var opens: [Int] = []
    /// The last change of zone and the zone before it: a request due at that very instant fired
    /// before the device moved (the platform re-matches only triggers still ahead).
    private var zoneChange: (at: Instant, from: ZoneRules)?
    /// When the memories above are next trimmed to what can still matter (every three simulated days).
    private var nextTrimAt: Int64 = .min

    /// A request's staleness deadline. A local request on a calendar trigger fires at a wall
    /// time, wherever the device is: its deadline is a wall time too, and moves with the device
    /// (`observeZoneChange`), as the engine's re-timing moves it when it hears of the move.
    private struct Deadline {
        var seconds: Int64
        var followsWallClock: Bool
    }

    /// Something the user did on a local date: a meal logged, or (`meal` nil) a workout done.
    private struct DoneThing: Hashable {
        var date: LocalDate
        var meal: MealType?
    }

    public init() {}

    /// Forgets what can no longer break an invariant, every three simulated days: delivered
    /// identifiers, folded items and the dates of morning greetings after a week, staleness
    /// deadlines two days after they passed, done things after three days. Trimming by time
    /// instead of by count keeps a user's checker to a few days of history; every three days,
    /// not daily, because each trim rebuilds the string-keyed tables.
    private mutating func trim(at now: Int64) {
        guard now >= nextTrimAt else { return }
        nextTrimAt = now + 3 * .secondsPerDay
        let weekAgo = now - 7 * .secondsPerDay
        deliveredIDs.keep { $0 >= weekAgo }
        deliveredItems.keep { $0 >= weekAgo }
        let twoDaysAgo = now - 2 * .secondsPerDay
        deadlines.keep { $0.seconds >= twoDaysAgo }
        let threeDaysAgo = now - 3 * .secondsPerDay
        done = done.filter { $0.value >= threeDaysAgo }
        // A delivery's local date is at most a day from its UTC date, and deliveries come in time
        // order, so no date older than a week can be delivered on again.
        let weekAgoDate = LocalDate(daysSinceEpoch: weekAgo.floorDivided(by: .secondsPerDay))
        morningDates = morningDates.filter { $0 >= weekAgoDate }
    }

    /// Checks one delivery released and shown at once (a local notification firing on the
    /// device): `observeRelease` and `observeShown` at the same instant.
    public mutating func observe(
        _ delivery: ObservedDelivery, profile: UserProfile, zone currentZone: ZoneRules
    ) -> [Invariant] {
        observeRelease(delivery, profile: profile, zone: currentZone)
            + observeShown(delivery, profile: profile, zone: currentZone)
    }

    /// The zone a delivery at `instant` is judged in: the zone before the last change for a
    /// delivery at the instant of the change, the current one otherwise.
    private func zone(at instant: Instant, current: ZoneRules) -> ZoneRules {
        zoneChange.flatMap { instant <= $0.at ? $0.from : nil } ?? current
    }

    /// The rules judged where the person meets a notification, at the instant it is shown on the
    /// phone: quiet hours, the hourly and daily caps (by the minute of showing), and one morning
    /// greeting a local day. A push that APNs held for an offline phone is judged when the phone
    /// shows it.
    public mutating func observeShown(
        _ delivery: ObservedDelivery, profile: UserProfile, zone currentZone: ZoneRules
    ) -> [Invariant] {
        var broken: [Invariant] = []
        let zone = zone(at: delivery.at, current: currentZone)
        let preferences = profile.preferences
        let local = zone.localDateTime(at: delivery.at)
        let timed = !delivery.releasedEarly
        if timed, let quiet = preferences.quietHours, !delivery.level.breaksThroughQuietHours, quiet.contains(local) {
            broken.append(.noDeliveryInQuietHours)
        }
        if delivery.kind == .morningGreeting && !morningDates.insert(local.date).inserted {
            broken.append(.morningGreetingOncePerLocalDay)
        }
        if timed && !delivery.kind.isTransactional {
            // Counted by the minute it is shown: the engine plans in minutes, and a push's
            // seconds in transit through APNs move no notification into another hour.
            let t = delivery.at.secondsSinceEpoch.floorDivided(by: .secondsPerMinute) * .secondsPerMinute
            capped.append(t)
            if let first = capped.firstIndex(where: { $0 >= t - .secondsPerDay - .secondsPerHour }), first > 0 {
                capped.removeFirst(first)
            }
            let inHour = capped.reduce(0) { $0 + ($1 > t - .secondsPerHour && $1 <= t ? 1 : 0) }
            if inHour > preferences.maxPerHour { broken.append(.perHourCapHeld) }
            if let dayCap = preferences.maxPerDay {
                let dayStart = zone.instant(for: LocalDateTime(date: local.date, secondOfDay: 0)).secondsSinceEpoch
                let onDay = capped.reduce(0) { $0 + ($1 >= dayStart && $1 <= t ? 1 : 0) }
                if onDay > dayCap { broken.append(.perDayCapHeld) }
            }
        }
        return broken
    }

    /// The rules judged on the engine's decision, at the instant it released a notification (a
    /// push handed to APNs at the time the engine chose): what it is and whether it was owed.
    public mutating func observeRelease(
        _ delivery: ObservedDelivery, profile: UserProfile, zone currentZone: ZoneRules
    ) -> [Invariant] {
        var broken: [Invariant] = []
        let zone = zone(at: delivery.at, current: currentZone)
        trim(at: delivery.at.secondsSinceEpoch)
        let preferences = profile.preferences
        let local = zone.localDateTime(at: delivery.at)
        let timed = !delivery.releasedEarly
        if delivery.kind == .reEngagement && profile.communication.absenceResponse == .giveMeSpace {
            broken.append(.noReEngagementForGiveMeSpace)
        }
        if !preferences.isEnabled(delivery.kind) { broken.append(.disabledKindNeverDelivered) }
        // A repeating request fires under the same identifier at every match: each firing is its
        // own delivery (after a westward flight a daily 07:00 can match twice in one local date,
        // as on a phone); a duplicate is the same firing delivered twice.
        let firing = FiringKey(delivery.id, repeatsAt: delivery.repeats ? delivery.at.secondsSinceEpoch : nil)
        let request = firing.request
        if deliveredIDs.updateValue(delivery.at.secondsSinceEpoch, forKey: firing) != nil {
            broken.append(.noDuplicateDelivery)
        }
        if timed && lastInstantOfKind[delivery.kind.ordinal] == delivery.at.secondsSinceEpoch {
            broken.append(.noSameInstantDuplicateOfKind)
        }
        if timed { lastInstantOfKind[delivery.kind.ordinal] = delivery.at.secondsSinceEpoch }
        let occurrence = request.occurrence ?? OccurrenceID(requestID: delivery.id)
        if timed, let id = occurrence, let window = SlotWindow.of(delivery.kind),
            let nominal = InvariantChecker.nominal(of: id, deliveredAt: local, preferences: preferences),
            !window.contains(delivery.at, nominal: zone.instant(for: nominal))
        {
            broken.append(.deliveryInsideSlotWindow)
        }
        if delivery.kind == .reEngagement {
            broken += observeNudge(delivery, occurrence: occurrence, local: local, profile: profile, timed: timed)
        }
        if !delivery.repeats, takeDeadline(of: firing, passedAt: delivery.at.secondsSinceEpoch), timed {
            broken.append(.noDeliveryAfterDeadline)
        }
        broken += deliverItems(ofGroup: request, at: delivery.at.secondsSinceEpoch)
        if delivery.kind == .mealReminder || delivery.kind == .workoutReminder, let reminded = occurrence {
            let date = reminded.date
            let doneKey: DoneThing? =
                switch reminded.kind {
                case .mealReminder: reminded.meal.map { DoneThing(date: date, meal: $0) }
                case .workoutReminder: DoneThing(date: date, meal: nil)
                default: nil
                }
            // Done before the reminder fired (at the same second the two simply cross).
            if let doneKey, let doneAt = done[doneKey], doneAt < delivery.at.secondsSinceEpoch {
                broken.append(.noReminderForDoneThing)
            }
        }
        return broken
    }

    /// Checks the platform's pending count and its silent drops since the last call.
    public func observePending(count: Int, droppedSinceLastCheck: Int = 0) -> [Invariant] {
        (count > 64 ? [.atMost64Pending] : []) + (droppedSinceLastCheck > 0 ? [.noRequestDroppedByPendingLimit] : [])
    }

    /// Learns deadlines and group membership from one of the engine's trace entries.
    /// `zone` is the engine's, in which it chose each request's trigger.
    public mutating func observe(_ trace: TraceEntry, zone: ZoneRules) -> [Invariant] {
        switch trace.decision {
        case .scheduled, .deferred:
            guard let plannedAt = trace.plannedAt else { return [] }
            let request = RequestKey(trace.subject)
            let isGroup = keyOfGroup[request] != nil
            let staleness = isGroup ? .secondsPerDay : KindPolicy.standard(for: trace.kind).stalenessSeconds
            let followsWallClock =
                ChannelPolicy.channel(for: trace.kind) == .local
                && trace.fireAt.map { TriggerChoice.usesCalendarTrigger($0, in: zone) } ?? false
            deadlines[FiringKey(request: request, firedAt: nil)] = Deadline(
                seconds: plannedAt.secondsSinceEpoch + staleness, followsWallClock: followsWallClock)
            return []
        case .folded:
            guard let groupID = trace.group, let key = trace.groupKey else { return [] }
            let group = RequestKey.occurrence(groupID)
            // A group's counted items (kept by number, not id) moving on: its request is the old
            // group, so whatever items of it remain move.
            let request = RequestKey(trace.subject)
            let moving = trace.countedItems != nil ? itemsOfGroup.removeValue(forKey: request) ?? [] : [request]
            for item in moving {
                if let previous = groupOfItem[item], previous != group {
                    itemsOfGroup[previous]?.remove(item)
                }
                groupOfItem[item] = group
                itemsOfGroup[group, default: []].insert(item)
            }
            if let plannedAt = trace.plannedAt { sendAtOfGroup[group] = plannedAt.secondsSinceEpoch }
            if let known = keyOfGroup[group], known != key { return [.groupNeverMixesKeys] }
            keyOfGroup[group] = key
            return []
        case .suppressed where trace.reason == .kindDisabled && trace.group != nil,
            .dropped where trace.group != nil && trace.reason == .stale:
            // The user disabled the kind while the item waited in a group, or it waited in
            // blocked digests past its time (`stale`): no longer owed, with its reason. An entry
            // whose request is its group speaks for the group's counted items: all that remain.
            let request = RequestKey(trace.subject)
            let items = trace.countedItems != nil ? itemsOfGroup.removeValue(forKey: request) ?? [] : [request]
            for item in items {
                if let group = groupOfItem.removeValue(forKey: item) {
                    itemsOfGroup[group]?.remove(item)
                }
            }
            return []
        default:
            return []
        }
    }

    /// Forgets `firing`'s deadline; whether `seconds` is past it.
    private mutating func takeDeadline(of firing: FiringKey, passedAt seconds: Int64) -> Bool {
        guard let deadline = deadlines.removeValue(forKey: firing) else { return false }
        return seconds > deadline.seconds
    }

    /// The folded items of `group` (if it is one), delivered with it at `seconds`.
    private mutating func deliverItems(ofGroup group: RequestKey, at seconds: Int64) -> [Invariant] {
        var broken: [Invariant] = []
        for item in closeGroup(group) {
            if deliveredItems.updateValue(seconds, forKey: FiringKey(request: item, firedAt: nil)) != nil {
                broken.append(.foldedItemInExactlyOneGroup)
            }
        }
        return broken
    }

    /// The parts of an alert the claim-time rules merged (`ClaimTimePolicy`), released inside it
    /// at `instant`: each part is delivered once and by its deadline, and a group's folded items
    /// are delivered with it. (The merged alert itself is judged as any release.)
    public mutating func observeMergedParts(_ parts: [String], at instant: Instant) -> [Invariant] {
        var broken: [Invariant] = []
        let seconds = instant.secondsSinceEpoch
        for part in parts {
            let firing = FiringKey(request: RequestKey(part), firedAt: nil)
            if deliveredIDs.updateValue(seconds, forKey: firing) != nil { broken.append(.noDuplicateDelivery) }
            if takeDeadline(of: firing, passedAt: seconds) { broken.append(.noDeliveryAfterDeadline) }
            broken += deliverItems(ofGroup: firing.request, at: seconds)
        }
        return broken
    }

    /// An alert the claim-time rules found past its staleness and completed unsent
    /// (`ClaimRecord.expiredKeys`): no longer owed, and a group's folded items with it (the
    /// inbox keeps them all).
    public mutating func observeExpired(_ requestID: String) {
        let request = RequestKey(requestID)
        deadlines.removeValue(forKey: FiringKey(request: request, firedAt: nil))
        closeGroup(request)
    }

    /// Forgets `group` (if it is one) and its items' membership; returns the items.
    @discardableResult
    private mutating func closeGroup(_ group: RequestKey) -> Set<RequestKey> {
        guard let items = itemsOfGroup.removeValue(forKey: group) else { return [] }
        keyOfGroup.removeValue(forKey: group)
        sendAtOfGroup.removeValue(forKey: group)
        for item in items { groupOfItem.removeValue(forKey: item) }
        return items
    }

    /// The campaign's cap, a second delivery of one attempt, and the local night.
    private mutating func observeNudge(
        _ delivery: ObservedDelivery, occurrence: OccurrenceID?, local: LocalDateTime, profile: UserProfile,
        timed: Bool
    ) -> [Invariant] {
        var broken: [Invariant] = []
        let configuration = EngineConfiguration()
        // give_me_space has an invariant of its own: no nudge at all.
        let cap =
            switch profile.communication.absenceResponse {
            case .giveMeSpace: Int.max
            case .lightNudge: configuration.lightNudgeAttemptDays.count
            case .checkInOnMe: configuration.checkInOnMeAttemptDays.count
            }
        if case .attempt(let attempt)? = occurrence?.slot {
            if nudgesThisAbsence.contains(attempt) { broken.append(.noNudgeAttemptTwice) }
            nudgesThisAbsence.append(attempt)
        }
        if nudgesThisAbsence.count > cap { broken.append(.nudgesWithinCampaignCap) }
        let time = local.timeOfDay
        if timed && !profile.preferences.isWakingTime(time) {
            let minute = time.minutesSinceMidnight
            let near = opens.count { open in
                let distance = abs(open - minute) % 1_440
                return min(distance, 1_440 - distance) <= 90
            }
            if near < 2 { broken.append(.noNudgeInLocalNight) }
        }
        return broken
    }

    /// Records the user's answer to a notification: any but dismiss and snooze is activity.
    public mutating func observeResponse(_ action: NotificationActionID) {
        if action != .dismiss && ResponseOutcome(action: action) != .snoozed { nudgesThisAbsence.removeAll() }
    }

    /// The device moved from `zone` to `newZone` at `instant`: opens recorded so far are local
    /// minutes of another zone, and the deadline of each request on a calendar trigger is the
    /// same wall time in the new zone.
    public mutating func observeZoneChange(from zone: ZoneRules, to newZone: ZoneRules, at instant: Instant) {
        opens.removeAll()
        zoneChange = (instant, zone)
        deadlines.update { deadline in
            guard deadline.followsWallClock else { return }
            let wallTime = zone.localDateTime(at: Instant(secondsSinceEpoch: deadline.seconds))
            deadline.seconds = newZone.instant(for: wallTime).secondsSinceEpoch
        }
    }

    /// Records something the user did, for the "already done" invariant, the campaign's cap and
    /// the evidence of being awake.
    public mutating func observe(_ activity: ActivityKind, at instant: Instant, zone: ZoneRules) {
        nudgesThisAbsence.removeAll()
        if case .appOpened = activity {
            opens.append(zone.localDateTime(at: instant).secondOfDay / 60)
            if opens.count > 20 { opens.removeFirst() }
        }
        let date = zone.localDate(at: instant)
        switch activity {
        case .mealLogged(let meal): done[DoneThing(date: date, meal: meal)] = instant.secondsSinceEpoch
        case .workoutCompleted: done[DoneThing(date: date, meal: nil)] = instant.secondsSinceEpoch
        default: break
        }
    }

    /// Folded items not delivered yet whose group is due by `instant` (the drain watches them).
    public func owedItems(dueBy instant: Instant) -> Set<String> {
        var owed: Set<String> = []
        for (item, group) in groupOfItem where deliveredItems[FiringKey(request: item, firedAt: nil)] == nil {
            if let sendAt = sendAtOfGroup[group], sendAt <= instant.secondsSinceEpoch { owed.insert(item.description) }
        }
        return owed
    }

    /// The items folded into `group` and not delivered yet.
    public func items(ofGroup group: String) -> Set<String> {
        Set((itemsOfGroup[RequestKey(group)] ?? []).lazy.map(\.description))
    }

    /// At the end of a run: items folded into a group that should have gone out by `end` and did not.
    public func finish(at end: Instant) -> [Invariant] {
        let lost = groupOfItem.contains { item, group in
            deliveredItems[FiringKey(request: item, firedAt: nil)] == nil
                && (sendAtOfGroup[group] ?? .max) + .secondsPerDay < end.secondsSinceEpoch
        }
        return lost ? [.foldedItemInExactlyOneGroup] : []
    }
}
