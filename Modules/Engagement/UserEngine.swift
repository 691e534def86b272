public import Content
public import Models
import Scheduling

/// The engine for one user: a value-type state machine that takes timestamped inputs and
/// returns effects. It reads no clock, draws no ambient randomness and performs no I/O, so the
/// simulator and a live runtime run the same code.
///
/// Planning model: local notifications fire while the app sleeps, so every rule (quiet hours,
/// caps, the lapse campaign) is applied when a notification is *planned*, and the plan is kept
/// in the platform's pending list. Each pass rebuilds the plan over a rolling horizon from the
/// inputs so far, then sends only the difference (schedule, cancel) to the platform. Planned
/// notifications whose time has passed are taken as delivered and count against the caps.
public struct UserEngine: Sendable {
    public private(set) var profile: UserProfile
    public private(set) var zone: ZoneRules
    public let configuration: EngineConfiguration
    /// The name copy may use, derived once from the profile.
    var firstName: String
    /// Who the copy is for (name, privacy level), derived once from the profile.
    public private(set) var recipient: Recipient
    /// Whether the user is in the re-engagement control group (fixed by the id and the configuration).
    public let isHeldOut: Bool
    /// The last activity (app open, workout, meal, log, chat); starts at creation.
    public private(set) var lastActiveAt: Instant
    /// Re-engagement nudges delivered in the current lapse.
    public private(set) var reEngagementAttemptsSent: Int = 0

    /// What the platform holds, as the engine planned it, sorted by fire time.
    private(set) var planned: [PlannedNotification] = []
    /// Fire times already passed, for the rolling caps.
    var ledger = CapLedger()
    /// Occurrences already fired (kept about a day), so an occurrence is never planned twice.
    var fired = OccurrenceMap<Instant>()
    /// Occurrences made moot by what the user did (meal logged, workout done, skipped).
    var done = OccurrenceMap<Instant>()
    /// Snoozed copies waiting to come back.
    var snoozed: [Candidate] = []
    /// One-off follow-ups of something the user did (a reflection a day after a check-in).
    var followUps: [Candidate] = []
    /// The last decision traced per occurrence, so a pass traces only what changed.
    var lastTraced = OccurrenceMap<TracedDecision>()
    /// Bumped by every change of state a plan depends on (preferences, zone, done, snoozes,
    /// notifications fired).
    var planInputsVersion = 0
    /// What the last plan was computed from; a pass with the same inputs would change nothing.
    var lastPlanKey: PlanKey?
    /// Social items waiting to go out: singles, batches and digests.
    var groups: [NotificationGroup] = []
    /// Numbers social occurrences; wraps within the 16 bits of an occurrence slot.
    var groupSequence = 0
    /// The end of the user's current app session: non-urgent notifications wait until then.
    var activeUntil: Instant?
    /// Writes copy: templates at once, the coach's answer when it is valid and in time.
    let content: ContentGenerator
    /// The last template and body per kind, so the same body never comes twice in a row.
    var templateMemory = TemplateMemory()
    /// Template choices; seeded by the caller, so runs are reproducible.
    var contentRandom: SeededGenerator
    /// Habitual workout times per weekday, from completed workouts.
    var habits = WorkoutHabits()
    var streak = WorkoutStreak()
    /// Starts of the last workouts, for the weekly review.
    var recentWorkouts: [LocalDateTime] = []
    /// How the user answers each kind at each hour; shifts or backs off routine reminders.
    var responses = ResponseStats()
    /// The coach's accepted copy per occurrence (it is asked once per occurrence; a re-plan keeps it).
    var coachCopy = OccurrenceMap<CoachCopy>()
    /// The hydration series' times, derived from the preferences (nil: no series allowed).
    var seriesTimes: [LocalTimeOfDay]?
    /// When the device last changed time zone.
    var zoneChangedAt: Instant?
    /// The last `reEngagementTimes()` and what it was computed from.
    var reEngagementCache: (inputs: ReEngagementInputs, times: [Int64])?
    /// Local minutes of the last app opens, for the habitual active time.
    var recentOpenMinutes: [Int] = []
    /// Fired notifications of adjustable kinds not yet answered (ignored after three hours).
    var unanswered: [(id: OccurrenceID, firedAt: Instant)] = []

    /// - Parameters:
    ///   - contentSeed: seeds the template choices (variety without repetition, reproducibly).
    ///   - content: the copy writer; shared, immutable template data.
    public init(
        profile: UserProfile, zone: ZoneRules, now: Instant, configuration: EngineConfiguration = .init(),
        contentSeed: UInt64 = 0, content: ContentGenerator = ContentGenerator()
    ) {
        self.content = content
        self.contentRandom = SeededGenerator(seed: contentSeed)
        self.profile = profile
        self.firstName = profile.firstName
        self.recipient = Recipient(profile)
        self.zone = zone
        self.configuration = configuration
        self.lastActiveAt = now
        self.isHeldOut =
            configuration.holdoutShare > 0
            && Holdout.isHeldOut(userID: profile.id, share: configuration.holdoutShare, salt: configuration.holdoutSalt)
        self.seriesTimes = hydrationSeriesTimes()
    }

    /// Requests the engine believes are pending on the device.
    public var plannedRequestIDs: [String] { planned.map(\.id.description) }

    /// When the requests the engine believes pending will fire, soonest first.
    public var plannedFireTimes: [Instant] { planned.map(\.fireAt) }

    public func lapseStage(at now: Instant) -> LapseStage {
        let idle = now - lastActiveAt
        if idle > configuration.churnRiskAfterSeconds { return .churnRisk }
        if idle > configuration.lapseAfterSeconds { return .lapsed }
        return .active
    }

    /// Applies one input at `now` and returns the effects to execute, in order.
    public mutating func handle(_ input: EngineInput, at now: Instant) -> [Effect] {
        var effects: [Effect] = []
        // What fired since the last input is history before anything else looks at the plan.
        retireFired(through: now)
        expireUnanswered(at: now)
        switch input {
        case .appLaunched:
            for job in BackgroundJob.allCases {
                effects.append(
                    .submitBackgroundTask(BackgroundTaskRequest(job: job, earliestBegin: nextRun(of: job, after: now))))
            }
        case .activity(let activity):
            recordActivity(activity, at: now)
            if case .appOpened(let sessionSeconds) = activity {
                recentOpenMinutes.append(zone.localDateTime(at: now).secondOfDay / 60)
                if recentOpenMinutes.count > 20 { recentOpenMinutes.removeFirst() }
                effects.append(.setBadge(0))
                effects.append(.clearDeliveredNotifications)
                startSession(until: now + Int64(sessionSeconds))
            }
        case .notificationResponse(let requestID, let kind, let action):
            respond(to: action, requestID: requestID, kind: kind, at: now, effects: &effects)
        case .backgroundTaskLaunched(let job):
            effects.append(
                .submitBackgroundTask(BackgroundTaskRequest(job: job, earliestBegin: nextRun(of: job, after: now))))
        case .preferencesChanged(let preferences):
            profile.preferences = preferences
            seriesTimes = hydrationSeriesTimes()
            planInputsVersion += 1
        case .timeZoneChanged(let newZone):
            movePlanned(to: newZone, at: now, into: &effects)
        case .socialEvent(let event):
            receive(event, at: now, into: &effects)
        case .unrecognizedResponse(let requestID, let actionIdentifier):
            let kind = OccurrenceID(requestID: requestID)?.kind ?? .morningGreeting
            effects.append(
                .trace(
                    TraceEntry(
                        at: now, userID: profile.id, requestID: requestID, kind: kind, decision: .suppressed,
                        reason: .unknownAction, detail: "unknown action identifier \"\(actionIdentifier.prefix(64))\""))
            )
        case .contentGenerated(let requestID, let outcome):
            applyCoachCopy(outcome, to: requestID, at: now, into: &effects)
        }
        plan(at: now, into: &effects)
        return effects
    }

    // MARK: - Inputs

    private mutating func recordActivity(_ activity: ActivityKind, at now: Instant) {
        if lapseStage(at: now) != .active { reEngagementAttemptsSent = 0 }
        lastActiveAt = max(lastActiveAt, now)
        let today = zone.localDate(at: now)
        switch activity {
        case .mealLogged(let meal):
            planInputsVersion += 1
            done[OccurrenceID(kind: .mealReminder, date: today, slot: MealType.allCases.firstIndex(of: meal)!)] = now
        case .workoutCompleted(let durationMinutes):
            markWorkoutsDone(on: today, at: now)
            recordWorkout(at: now, durationMinutes: durationMinutes)
        case .checkInCompleted:
            planInputsVersion += 1
            // Today's check-in reminders are moot; a reflection follows a day later (seed 004).
            done[OccurrenceID(kind: .checkInReminder, date: today, slot: 0)] = now
            let reflectAt = now + .secondsPerDay
            let minute = zone.localDateTime(at: reflectAt).secondOfDay / 60
            followUps.removeAll { $0.kind == .reflection }
            followUps.append(
                candidate(
                    OccurrenceID(
                        kind: .reflection, daysSinceEpoch: zone.localDateTime(at: reflectAt).daysSinceEpoch,
                        slot: minute),
                    at: reflectAt))
        default: break
        }
    }

    /// The occurrence `id` at `plannedAt`, with its kind's interruption level (from the
    /// preferences) and delivery policy.
    func candidate(_ id: OccurrenceID, at plannedAt: Instant) -> Candidate {
        Candidate(
            id: id, kind: id.kind, plannedAt: plannedAt, level: profile.preferences.interruptionLevel(for: id.kind),
            policy: .standard(for: id.kind))
    }

    /// Whether the user already did what the occurrence reminds of.
    private func isDone(_ id: OccurrenceID) -> Bool {
        if done[id.original] != nil { return true }
        if id.kind == .checkInReminder {
            return done[OccurrenceID(kind: .checkInReminder, daysSinceEpoch: Int64(id.day), slot: 0)] != nil
        }
        return false
    }

    private mutating func respond(
        to action: NotificationActionID, requestID: String, kind: NotificationKind, at now: Instant,
        effects: inout [Effect]
    ) {
        learnResponse(ResponseOutcome(action: action), requestID: requestID, kind: kind, at: now)
        let snoozeSeconds: Int64? =
            switch action {
            case .snooze30, .snoozeReminder: 30 * .secondsPerMinute
            case .snooze: .secondsPerHour
            default: nil
            }
        if let snoozeSeconds, let answered = OccurrenceID(requestID: requestID) {
            var id = answered
            id.snooze += 1
            snoozed.removeAll { $0.id.original == id.original }
            planInputsVersion += 1
            snoozed.append(
                candidate(id, at: now + snoozeSeconds))
            effects.append(
                .trace(
                    TraceEntry(
                        at: now, userID: profile.id, requestID: requestID, kind: kind, decision: .deferred,
                        reason: .snoozed, fireAt: now + snoozeSeconds, detail: "snoozed \(snoozeSeconds / 60) min")))
            return
        }
        if action != .dismiss { recordActivity(.appOpened(sessionSeconds: 0), at: now) }
        let today = zone.localDate(at: now)
        switch action {
        case .completeWorkout, .skipTodayAction, .skipWorkout:
            markWorkoutsDone(on: today, at: now)
        default: break
        }
        if let link = ResponseRouting.deepLink(for: action, kind: kind) { effects.append(.openDeepLink(link)) }
    }

    /// The device re-matches wall-clock (calendar) triggers in its new zone; follow it, so the
    /// plan knows when each pending request will now fire. One whose wall time has passed in the
    /// new zone was dropped by the device; it is planned again at once if still worth sending.
    private mutating func movePlanned(to newZone: ZoneRules, at now: Instant, into effects: inout [Effect]) {
        planInputsVersion += 1
        zoneChangedAt = now
        let oldZone = zone
        zone = newZone
        profile.timeZone = newZone.identifier
        // Digests arrive at the user's chosen local time, wherever the user is.
        for index in groups.indices where groups[index].isDigest {
            groups[index].sendAt = digestTime(weekly: groups[index].mode == .weeklyDigest, after: now)
        }
        var moved: [PlannedNotification] = []
        for item in planned {
            guard item.followsWallClock else {
                moved.append(item)
                continue
            }
            var copy = item
            if item.repeatsDaily {
                copy.fireAt = nextSeriesFire(oldZone.localDateTime(at: item.fireAt).timeOfDay, after: now)
                copy.plannedAt = copy.fireAt
                moved.append(copy)
                continue
            }
            copy.fireAt = newZone.instant(for: oldZone.localDateTime(at: item.fireAt))
            copy.plannedAt = newZone.instant(for: oldZone.localDateTime(at: item.plannedAt))
            moved.append(copy)
            // The device dropped a request whose wall time has now passed; the pass that follows
            // in this same input plans it again from now, within its original deadline.
            guard copy.fireAt > now else { continue }
            record(
                copy.id, copy.fireAt == copy.plannedAt ? .scheduled : .deferred, .timeZoneChanged,
                plannedAt: copy.plannedAt, fireAt: copy.fireAt, level: nil, at: now, into: &effects)
        }
        planned = moved.sorted { $0.fireAt != $1.fireAt ? $0.fireAt < $1.fireAt : $0.id < $1.id }
    }

    private mutating func markWorkoutsDone(on date: LocalDate, at now: Instant) {
        planInputsVersion += 1
        for workout in profile.preferences.workoutSchedule where workout.weekday == date.weekday {
            done[OccurrenceID(kind: .workoutReminder, date: date, slot: workout.time.minutesSinceMidnight)] = now
        }
        // The day's coaching around the workout is moot too.
        if let habit = habits.habit(for: date.weekday) {
            for kind in [NotificationKind.preWorkout, .postWorkoutCheckIn] {
                done[OccurrenceID(kind: kind, date: date, slot: habit.time.minutesSinceMidnight)] = now
            }
        }
        done[OccurrenceID(kind: .streakReminder, date: date, slot: 0)] = now
    }

    private func nextRun(of job: BackgroundJob, after now: Instant) -> Instant {
        switch job {
        case .lapseDetection: return now + .secondsPerDay
        case .engagementAnalysis: return now + 3 * .secondsPerDay
        case .patternAnalysis:
            let threeAM = CalendarMatch(hour: 3, minute: 0)
            return threeAM.nextMatch(after: now, in: zone) ?? now + .secondsPerDay
        }
    }

    // MARK: - Planning

    private mutating func plan(at now: Instant, into effects: inout [Effect], depth: Int = 0) {
        // Same inputs, same plan: skip the pass. What fired since is already in the plan's
        // accounting, and the horizon ends at a local midnight, so time alone changes nothing
        // until that boundary moves (once a day).
        let horizonEnd = routineHorizonEnd(at: now)
        let key = PlanKey(
            version: planInputsVersion, lapseStage: lapseStage(at: now), horizonEnd: horizonEnd,
            reEngagementTimes: currentReEngagementTimes())
        if key == lastPlanKey { return }
        lastPlanKey = key
        var series = lapseStage(at: now) == .active && !responses.adjusts(.hydration) ? seriesTimes : nil
        // Only a recent change of zone can bring a series' times round again too soon.
        if let times = series, let moved = zoneChangedAt, now - moved < .secondsPerDay + .secondsPerHour,
            !seriesFitsRecentHistory(times, at: now)
        {
            series = nil
        }
        var candidates = routineCandidates(at: now, until: horizonEnd, skipHydration: series != nil)
        candidates += snoozed
        candidates += followUps
        candidates += groups.map { groupCandidate($0) }
        var suppressed: [(Candidate, ReasonCode)] = []
        appendReEngagement(to: &candidates, suppressed: &suppressed, at: now)
        // Value first, then time: caps and pending slots go to what matters most (a digest the
        // user asked for before a routine hydration nudge), earlier before later within a value.
        candidates.sort {
            if $0.policy.relevance != $1.policy.relevance { return $0.policy.relevance > $1.policy.relevance }
            return $0.plannedAt != $1.plannedAt ? $0.plannedAt < $1.plannedAt : $0.id < $1.id
        }

        let previous = OccurrenceMap(planned.lazy.map { ($0.id, $0) })
        var ledger = self.ledger
        var next: [PlannedNotification] = []
        next.reserveCapacity(planned.count + 4)
        // A daily series holds one slot each and fires every day: its past day and its future
        // occurrences go into the cap ledger before anything else is planned around them.
        var seriesCandidates: [Candidate] = []
        // The series' occurrences go into the ledger as far as any candidate reaches (nudges are days ahead).
        let ledgerEnd = max(horizonEnd, (candidates.map(\.plannedAt).max() ?? horizonEnd) + .secondsPerDay)
        for time in series ?? [] {
            // Past firings are already in the ledger (retireFired); add the future ones.
            for at in seriesFireTimes(time, from: now + 1, to: ledgerEnd) { ledger.insert(at) }
            let first = nextSeriesFire(time, after: now)
            let candidate = candidate(.dailySeries(.hydration, minute: time.minutesSinceMidnight), at: first)
            seriesCandidates.append(candidate)
            var item = PlannedNotification(candidate: candidate, fireAt: first, zone: zone)
            item.repeatsDaily = true
            next.append(item)
        }
        var outcomes: [(Candidate, RuleOutcome)] = []
        outcomes.reserveCapacity(candidates.count)
        let slotBudget = configuration.pendingLimit - configuration.reservedSlots
        for candidate in candidates where next.count < slotBudget {
            guard fired[candidate.id] == nil else { continue }
            if isDone(candidate.id) {
                suppressed.append((candidate, .alreadyDone))
                continue
            }
            // An occurrence whose time passed before it was ever planned is not sent late; one
            // that was planned (a time-zone change moved it into the past) goes out now, within
            // its original deadline.
            var candidate = candidate
            if candidate.plannedAt <= now {
                guard previous[candidate.id] != nil else { continue }
                let delay = now + 1 - candidate.plannedAt
                candidate.plannedAt = now + 1
                candidate.policy.stalenessSeconds = max(0, candidate.policy.stalenessSeconds - delay)
            }
            let outcome = DeliveryRules.evaluate(
                candidate, preferences: profile.preferences, zone: zone, ledger: ledger, activeUntil: activeUntil)
            if case .send(let fireAt, _) = outcome {
                guard fireAt > now else { continue }
                ledger.insert(fireAt)
                next.append(PlannedNotification(candidate: candidate, fireAt: fireAt, zone: zone))
            }
            outcomes.append((candidate, outcome))
        }
        next.sort { $0.fireAt != $1.fireAt ? $0.fireAt < $1.fireAt : $0.id < $1.id }

        // Cancel what the new plan no longer holds, with the reason when one is known.
        let nextIDs = OccurrenceMap(next.lazy.map { ($0.id, ()) })
        let cancelled = planned.filter { !nextIDs.contains($0.id) }
        if !cancelled.isEmpty {
            effects.append(.cancel(requestIDs: cancelled.map(\.id.description)))
            for old in cancelled {
                let reason =
                    suppressed.first { $0.0.id == old.id }?.1
                    ?? outcomes.lazy.compactMap { item -> ReasonCode? in
                        if item.0.id == old.id, case .drop(let reason) = item.1 { return reason }
                        return nil
                    }.first ?? cancellationReason(for: old, at: now)
                record(
                    old.id, .cancelled, reason, plannedAt: old.plannedAt, fireAt: nil, level: nil, at: now,
                    into: &effects)
            }
        }
        for candidate in seriesCandidates where previous[candidate.id] == nil {
            effects.append(
                .schedule(makeRequest(for: candidate, fireAt: candidate.plannedAt), fireAt: candidate.plannedAt))
            record(
                candidate.id, .scheduled, .dailySeries, plannedAt: candidate.plannedAt, fireAt: candidate.plannedAt,
                level: candidate.level, at: now, into: &effects)
        }
        for (candidate, outcome) in outcomes {
            switch outcome {
            case .send(let fireAt, let reason):
                guard nextIDs.contains(candidate.id) else { continue }
                if let old = previous[candidate.id], old.fireAt == fireAt, old.revision == candidate.revision {
                    continue
                }
                let request = makeRequest(for: candidate, fireAt: fireAt)
                effects.append(.schedule(request, fireAt: fireAt))
                askCoach(for: candidate, fireAt: fireAt, into: &effects)
                let decision: TraceDecision = fireAt != candidate.plannedAt ? .deferred : .scheduled
                record(
                    candidate.id, decision, reason, plannedAt: candidate.plannedAt, fireAt: fireAt,
                    level: candidate.level, at: now, into: &effects)
            case .drop(let reason):
                if candidate.kind.isSocial {
                    regroup(candidate.id, because: reason, at: now, into: &effects)
                    continue
                }
                guard previous[candidate.id] == nil else { continue }  // traced as cancelled above
                record(
                    candidate.id, .dropped, reason, plannedAt: candidate.plannedAt, fireAt: nil, level: candidate.level,
                    at: now, into: &effects)
            case .fold(let reason):
                regroup(candidate.id, because: reason, at: now, into: &effects)
            }
        }
        for (candidate, reason) in suppressed where previous[candidate.id] == nil {
            record(
                candidate.id, .suppressed, reason, plannedAt: candidate.plannedAt, fireAt: nil, level: nil, at: now,
                into: &effects)
        }
        planned = next
        // Items moved into a digest make a new group to plan in this same pass.
        if lastPlanKey?.version != planInputsVersion, depth < 3 { plan(at: now, into: &effects, depth: depth + 1) }
    }

    /// Moves planned notifications whose time has come into the ledger of sent ones.
    private mutating func retireFired(through now: Instant) {
        // A daily series stays pending: it only moves on to its next day.
        if planned.contains(where: { $0.repeatsDaily && $0.fireAt <= now }) {
            for index in planned.indices where planned[index].repeatsDaily && planned[index].fireAt <= now {
                let local = zone.localDateTime(at: planned[index].fireAt).timeOfDay
                // Every firing since the last input is history for the caps, like any delivery.
                ledger.insert(planned[index].fireAt)
                for at in seriesFireTimes(local, from: planned[index].fireAt + 1, to: now + 1) { ledger.insert(at) }
                planned[index].fireAt = nextSeriesFire(local, after: now)
            }
            planned.sort { $0.fireAt != $1.fireAt ? $0.fireAt < $1.fireAt : $0.id < $1.id }
        }
        var firedCount = 0
        for item in planned {
            guard item.fireAt <= now else { break }
            firedCount += 1
            fired[item.id] = item.fireAt
            ledger.insert(item.fireAt)
            if item.kind == .reEngagement { reEngagementAttemptsSent += 1 }
            if item.id.snooze > 0 { snoozed.removeAll { $0.id == item.id } }
            if item.kind == .reflection || item.kind == .achievement { followUps.removeAll { $0.id == item.id } }
            awaitResponse(item.id, firedAt: item.fireAt)
            if item.kind.isSocial { groups.removeAll { $0.id == item.id } }
        }
        guard firedCount > 0 || !snoozed.isEmpty else { return }
        planned.removeFirst(firedCount)
        ledger.prune(before: now - .secondsPerDay - .secondsPerHour)
        // Candidates reach back at most a staleness window (18 h); keep a day of memory. What
        // fired or was done is kept three days: flying west repeats up to a day of local dates.
        let horizonStart = now - .secondsPerDay - 2 * .secondsPerHour
        let datesRepeatFrom = now - 3 * .secondsPerDay
        if fired.count > 96 { fired.filter { $0 >= datesRepeatFrom } }
        if done.count > 32 { done.filter { $0 >= datesRepeatFrom } }
        if lastTraced.count > 160 { lastTraced.filter { $0.plannedAt >= horizonStart } }
        if coachCopy.count > 32 { coachCopy.filter { $0.askedAt >= horizonStart } }
        snoozed.removeAll { $0.plannedAt + $0.policy.stalenessSeconds < now }
        followUps.removeAll { $0.plannedAt + $0.policy.stalenessSeconds < now }
    }

    private func cancellationReason(for old: PlannedNotification, at now: Instant) -> ReasonCode {
        if !profile.preferences.isEnabled(old.kind) { return .kindDisabled }
        if old.kind == .reEngagement && lapseStage(at: now) == .active && lastActiveAt > now - .secondsPerHour {
            return .userReturned
        }
        return .replanned
    }

    /// Emits a trace entry unless the occurrence's last traced outcome is the same.
    mutating func record(
        _ id: OccurrenceID, _ decision: TraceDecision, _ reason: ReasonCode, plannedAt: Instant, fireAt: Instant?,
        level: InterruptionLevel?, at now: Instant, into effects: inout [Effect]
    ) {
        let traced = TracedDecision(decision: decision, reason: reason, fireAt: fireAt, plannedAt: plannedAt)
        if lastTraced[id] == traced { return }
        lastTraced[id] = traced
        effects.append(
            .trace(
                TraceEntry(
                    at: now, userID: profile.id, requestID: id.description, kind: id.kind, decision: decision,
                    reason: reason, plannedAt: plannedAt, fireAt: fireAt, level: level,
                    detail: detail(for: reason, decision: decision, now: now))))
    }

    private func detail(for reason: ReasonCode, decision: TraceDecision, now: Instant) -> String {
        switch reason {
        case .absenceGiveMeSpace: "absence response give_me_space: no nudges"
        case .userReturned: "active again at \(zone.formatted(lastActiveAt))"
        case .kindDisabled: "kind disabled in preferences"
        case .alreadyDone: "already done"
        case .holdout: "in the re-engagement control group"
        default:
            DeliveryRules.explain(
                reason, dropped: decision == .dropped || decision == .cancelled, preferences: profile.preferences)
        }
    }

    // MARK: - Candidates

    /// Where routine planning stops: the local midnight after `now + horizonSeconds`, or earlier
    /// when the user would be lapsed by then (routine reminders pause for a user who stays away).
    private func routineHorizonEnd(at now: Instant) -> Instant {
        let day = zone.localDateTime(at: now + configuration.horizonSeconds).daysSinceEpoch
        let endOfDay = zone.instant(for: LocalDateTime(localSeconds: (day + 1) * .secondsPerDay))
        return min(endOfDay, lastActiveAt + configuration.lapseAfterSeconds)
    }

    /// Routine reminders from a little before `now` until `end`, in the user's zone.
    private func routineCandidates(at now: Instant, until end: Instant, skipHydration: Bool) -> [Candidate] {
        let preferences = profile.preferences
        let earliest = now - 4 * .secondsPerHour
        guard end > earliest else { return [] }
        var result: [Candidate] = []
        result.reserveCapacity(64)
        // The level of each routine kind, looked up once per pass rather than once per occurrence.
        let levels = RoutineLevels(preferences)
        /// `day` names the occurrence; the reminder itself may fall `dayOffset` days earlier.
        func add(_ kind: NotificationKind, _ day: Int64, slot: Int, at time: LocalTimeOfDay, dayOffset: Int64 = 0) {
            let at = zone.instant(for: LocalDateTime(daysSinceEpoch: day + dayOffset, time: time))
            guard at < end, at > earliest else { return }
            result.append(
                Candidate(
                    id: OccurrenceID(kind: kind, daysSinceEpoch: day, slot: slot), kind: kind, plannedAt: at,
                    level: levels[kind], policy: .standard(for: kind)))
        }
        let morning = preferences.isEnabled(.morningGreeting)
        let meals = preferences.isEnabled(.mealReminder)
        let hydration = preferences.isEnabled(.hydration) && !skipHydration ? preferences.hydration : nil
        let workouts = preferences.isEnabled(.workoutReminder) ? preferences.workoutSchedule : []
        var day = zone.localDateTime(at: earliest).daysSinceEpoch
        let today = zone.localDateTime(at: now).daysSinceEpoch
        let lastDay = zone.localDateTime(at: end).daysSinceEpoch
        while day <= lastDay {
            if morning { add(.morningGreeting, day, slot: 0, at: preferences.morningTime) }
            if meals {
                for (index, meal) in MealType.allCases.enumerated() {
                    add(.mealReminder, day, slot: index, at: meal.defaultTime)
                }
            }
            if let hydration {
                var minute = preferences.wakeTime.minutesSinceMidnight
                while minute < preferences.sleepTime.minutesSinceMidnight {
                    add(.hydration, day, slot: minute, at: LocalTimeOfDay(minutesSinceMidnight: minute))
                    minute += hydration.intervalMinutes
                }
            }
            if !workouts.isEmpty {
                let weekday = Weekday(daysSinceEpoch: day)
                for workout in workouts where workout.weekday == weekday {
                    let minute = workout.time.minutesSinceMidnight - preferences.workoutReminderLeadMinutes
                    add(
                        .workoutReminder, day, slot: workout.time.minutesSinceMidnight,
                        at: LocalTimeOfDay(minutesSinceMidnight: minute >= 0 ? minute : minute + 1_440),
                        dayOffset: minute >= 0 ? 0 : -1)
                }
            }
            result += coachingCandidates(day: day, today: today, end: end, earliest: earliest)
            day += 1
        }
        if !responses.isEmpty { result = result.compactMap { adjusted($0) } }
        if preferences.isEnabled(.checkInReminder) {
            let from = zone.localDateTime(at: earliest)
            let level = preferences.interruptionLevel(for: .checkInReminder)
            for reminder in preferences.reminders {
                for occurrence in reminder.occurrences(from: from, limit: 64) {
                    let at = zone.instant(for: occurrence)
                    guard at < end else { break }
                    guard at > earliest else { continue }
                    result.append(
                        Candidate(
                            id: .reminder(
                                number: reminder.number, daysSinceEpoch: occurrence.daysSinceEpoch,
                                minute: occurrence.secondOfDay / 60),
                            kind: .checkInReminder, plannedAt: at, level: level,
                            policy: .standard(for: .checkInReminder)))
                }
            }
        }
        return result
    }

    /// When the user usually opens the app (circular mean of recent opens, from five of them),
    /// rounded to 15 minutes: nudges go out then, not at the moment a lapse is detected.
    var habitualActiveTime: LocalTimeOfDay? {
        guard recentOpenMinutes.count >= 5, let mean = CircularTime.mean(minutes: recentOpenMinutes) else { return nil }
        return LocalTimeOfDay(minutesSinceMidnight: (mean.meanMinutes / 15 * 15) % 1_440)
    }

    /// When the nudges of the current lapse campaign would be planned (they move with the last activity).
    /// `reEngagementTimes()`, recomputed only when something it depends on changed (most inputs
    /// change none of it: a delivery, a coach answer, a background run).
    private mutating func currentReEngagementTimes() -> [Int64] {
        let inputs = ReEngagementInputs(
            lastActiveAt: lastActiveAt, zone: zone.identifier, habitualTime: habitualActiveTime,
            version: planInputsVersion)
        if let cached = reEngagementCache, cached.inputs == inputs { return cached.times }
        let times = reEngagementTimes()
        reEngagementCache = (inputs, times)
        return times
    }

    private func reEngagementTimes() -> [Int64] {
        var candidates: [Candidate] = []
        var suppressed: [(Candidate, ReasonCode)] = []
        appendReEngagement(to: &candidates, suppressed: &suppressed, at: lastActiveAt)
        return candidates.map { $0.plannedAt.secondsSinceEpoch } + [
            Int64(zone.localDate(at: lastActiveAt).daysSinceEpoch)
        ]
    }

    /// The lapse campaign: nudges planned ahead at the days after the last activity, so they
    /// fire even if the app never runs again, and are cancelled the moment the user returns.
    private func appendReEngagement(
        to candidates: inout [Candidate], suppressed: inout [(Candidate, ReasonCode)], at now: Instant
    ) {
        let preferences = profile.preferences
        guard preferences.isEnabled(.reEngagement) else { return }
        let response = profile.communication.absenceResponse
        let days: [Int] =
            switch response {
            case .giveMeSpace: [Int(configuration.lapseAfterSeconds / .secondsPerDay)]
            case .lightNudge: configuration.lightNudgeAttemptDays
            case .checkInOnMe: configuration.checkInOnMeAttemptDays
            }
        let time = profile.communication.preferredTimes.first ?? habitualActiveTime ?? configuration.nudgeTime
        let lapseDate = zone.localDate(at: lastActiveAt)
        for (index, day) in days.enumerated() {
            let due = lastActiveAt + Int64(day) * .secondsPerDay
            var date = zone.localDate(at: due)
            if zone.instant(for: LocalDateTime(date: date, time: time)) < due { date = date.adding(days: 1) }
            let candidate = candidate(
                OccurrenceID(kind: .reEngagement, date: lapseDate, slot: index + 1),
                at: zone.instant(for: LocalDateTime(date: date, time: time)))
            if response == .giveMeSpace {
                // Silence, and the trace says so, once the user is actually away.
                if due <= now { suppressed.append((candidate, .absenceGiveMeSpace)) }
                return
            }
            if isHeldOut {
                // The control group: no nudge, so the lift of nudges can be measured.
                if due <= now { suppressed.append((candidate, .holdout)) }
                return
            }
            candidates.append(candidate)
        }
    }

    /// The trigger of a request: wall-clock times on the minute as calendar triggers, else a date.
    func trigger(for fireAt: Instant) -> NotificationTrigger {
        UserEngine.usesCalendarTrigger(fireAt, in: zone)
            ? .calendar(CalendarMatch(zone.localDateTime(at: fireAt)), repeats: false) : .date(fireAt)
    }

    /// Wall-clock times on the minute go out as calendar triggers (they follow the device's zone,
    /// as UNCalendarNotificationTrigger does); anything else as a date trigger.
    static func usesCalendarTrigger(_ fireAt: Instant, in zone: ZoneRules) -> Bool {
        let local = zone.localDateTime(at: fireAt)
        return local.second == 0 && zone.instant(for: local) == fireAt
    }

    /// What the engine knows that copy may use; redacted for the privacy level by `ContentGenerator`.
    private func contentRequest(for candidate: Candidate, fireAt: Instant) -> ContentRequest {
        var context = CopyContext(firstName: firstName)
        context.meal = candidate.id.meal
        if candidate.kind == .reEngagement {
            let daysAway = Int((fireAt - lastActiveAt) / .secondsPerDay)
            context.daysAway = daysAway
            context.stronger =
                profile.communication.absenceResponse == .checkInOnMe && daysAway >= configuration.strongerFromDay
        }
        coachingFacts(&context, for: candidate.id, fireAt: fireAt)
        if candidate.kind == .workoutReminder {
            context.workoutType =
                profile.preferences.workoutSchedule.first { $0.time.minutesSinceMidnight == Int(candidate.id.slot) }?
                .type
        }
        return ContentRequest(
            kind: candidate.kind, style: profile.motivationalStyle, recipient: recipient, context: context)
    }

    private mutating func makeRequest(for candidate: Candidate, fireAt: Instant, copy: Copy? = nil)
        -> NotificationRequest
    {
        if candidate.kind.isSocial, let group = groups.first(where: { $0.id == candidate.id }) {
            return groupRequest(group, candidate: candidate, fireAt: fireAt)
        }
        let requestID = candidate.id.description
        let requestTrigger: NotificationTrigger =
            candidate.id.isDailySeries
            ? .calendar(.daily(at: LocalTimeOfDay(minutesSinceMidnight: Int(candidate.id.slot))), repeats: true)
            : trigger(for: fireAt)
        let request = contentRequest(for: candidate, fireAt: fireAt)
        let text: Copy
        if let copy {
            text = copy
        } else if let accepted = coachCopy[candidate.id]?.copy {
            text = accepted
        } else {
            let decision = content.decide(nil, for: request, memory: &templateMemory, generator: &contentRandom)
            text = decision.copy
        }
        let body = NotificationContent(
            kind: candidate.kind, title: text.title, body: text.body, threadID: candidate.policy.threadID,
            interruptionLevel: candidate.level, relevanceScore: candidate.policy.relevance,
            sound: profile.preferences.soundEnabled ? NotificationStyling.sound(for: candidate.kind) : nil,
            deepLink: ResponseRouting.defaultLink(for: candidate.kind, meal: request.context.meal))
        return NotificationRequest(identifier: requestID, content: body, trigger: requestTrigger)
    }

    /// Asks the coach for the copy of a request just scheduled, for the kinds that use it, once
    /// per occurrence.
    private mutating func askCoach(for candidate: Candidate, fireAt: Instant, into effects: inout [Effect]) {
        guard configuration.coachKinds.contains(candidate.kind), !candidate.id.isDailySeries,
            coachCopy[candidate.id] == nil
        else { return }
        coachCopy[candidate.id] = CoachCopy(copy: nil, askedAt: fireAt)
        let request = contentRequest(for: candidate, fireAt: fireAt)
        effects.append(
            .generateContent(requestID: candidate.id.description, request: content.coachRequest(for: request)))
    }

    /// The coach answered: replace the template copy if the answer is valid and the request still
    /// pending; either way the trace says which copy goes out and why.
    private mutating func applyCoachCopy(
        _ outcome: CoachOutcome, to requestID: String, at now: Instant, into effects: inout [Effect]
    ) {
        guard let id = OccurrenceID(requestID: requestID), let item = planned.first(where: { $0.id == id }),
            item.fireAt > now
        else { return }
        let candidate = candidate(id, at: item.plannedAt)
        let request = contentRequest(for: candidate, fireAt: item.fireAt)
        switch content.judge(outcome, for: request) {
        case .accepted(let copy, _):
            templateMemory.record(id.kind, body: copy.body)
            coachCopy[id] = CoachCopy(copy: copy, askedAt: item.fireAt)
            effects.append(.schedule(makeRequest(for: candidate, fireAt: item.fireAt, copy: copy), fireAt: item.fireAt))
            effects.append(
                .trace(
                    TraceEntry(
                        at: now, userID: profile.id, requestID: requestID, kind: id.kind, decision: .scheduled,
                        reason: .coachCopy, plannedAt: item.plannedAt, fireAt: item.fireAt, detail: "AI copy accepted"))
            )
        case .rejected(let reason, _):
            effects.append(
                .trace(
                    TraceEntry(
                        at: now, userID: profile.id, requestID: requestID, kind: id.kind, decision: .scheduled,
                        reason: .templateFallback, plannedAt: item.plannedAt, fireAt: item.fireAt,
                        detail: "template copy kept: \(reason.code)")))
        }
    }
}

/// A notification the engine has handed to the platform.
struct PlannedNotification: Hashable, Sendable {
    var id: OccurrenceID
    var plannedAt: Instant
    var fireAt: Instant
    /// Scheduled with a calendar trigger, which the device re-matches when its zone changes.
    var followsWallClock: Bool
    /// The content revision scheduled (see `Candidate.revision`).
    var revision: Int
    /// A repeating daily request: it stays pending after it fires.
    var repeatsDaily = false
    var kind: NotificationKind { id.kind }

    init(candidate: Candidate, fireAt: Instant, zone: ZoneRules) {
        id = candidate.id
        plannedAt = candidate.plannedAt
        self.fireAt = fireAt
        followsWallClock = UserEngine.usesCalendarTrigger(fireAt, in: zone)
        revision = candidate.revision
    }
}

/// Interruption levels of the routine kinds, resolved once per planning pass.
struct RoutineLevels {
    let morning, meal, hydration, workout: InterruptionLevel

    init(_ preferences: NotificationPreferences) {
        morning = preferences.interruptionLevel(for: .morningGreeting)
        meal = preferences.interruptionLevel(for: .mealReminder)
        hydration = preferences.interruptionLevel(for: .hydration)
        workout = preferences.interruptionLevel(for: .workoutReminder)
    }

    subscript(kind: NotificationKind) -> InterruptionLevel {
        switch kind {
        case .morningGreeting: morning
        case .mealReminder: meal
        case .hydration: hydration
        default: workout
        }
    }
}

/// What the coach wrote for an occurrence (nil while the answer is pending or was refused).
struct CoachCopy: Hashable, Sendable {
    var copy: Copy?
    /// When the occurrence was planned to fire when the coach was asked; for pruning.
    var askedAt: Instant
}

/// What the nudge times depend on.
struct ReEngagementInputs: Hashable, Sendable {
    var lastActiveAt: Instant
    var zone: String
    var habitualTime: LocalTimeOfDay?
    var version: Int
}

/// The inputs a plan is computed from, beyond the occurrences themselves.
struct PlanKey: Hashable, Sendable {
    var version: Int
    var lapseStage: LapseStage
    var horizonEnd: Instant
    var reEngagementTimes: [Int64]
}

struct TracedDecision: Hashable, Sendable {
    var decision: TraceDecision
    var reason: ReasonCode
    var fireAt: Instant?
    var plannedAt: Instant
}
