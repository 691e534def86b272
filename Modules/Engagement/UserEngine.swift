public import Content
import LiveActivity
public import Models
public import Scheduling

/// The engine for one user, as a reducer: it applies a timestamped input to its state, asks
/// its candidate sources (routine, coaching, reminders, the lapse campaign, social groups,
/// snoozes and follow-ups) what could be sent, runs the planner and returns effects. It reads
/// no clock, draws no ambient randomness and performs no I/O, so the simulator and a live
/// runtime run the same code.
///
/// Planning model: local notifications fire while the app sleeps, so every rule (quiet hours,
/// caps, the lapse campaign) is applied when a notification is *planned*, and the plan is kept
/// in the platform's pending list. Each pass rebuilds the plan over a rolling horizon from the
/// inputs so far, then sends only the difference (schedule, cancel) to the platform. Planned
/// notifications whose time has passed are taken as delivered and count against the caps.
public struct UserEngine: Sendable {
    public let configuration: EngineConfiguration
    /// Writes copy: templates at once, the coach's answer when it is valid and in time.
    let content: ContentGenerator
    /// Everything the engine knows about the user; see `EngineState`.
    public internal(set) var state: EngineState

    /// - Parameters:
    ///   - contentSeed: seeds the template choices (variety without repetition, reproducibly).
    ///   - content: the copy writer (shared, immutable template data), picked by the composition root.
    public init(
        profile: UserProfile, zone: ZoneRules, now: Instant, configuration: EngineConfiguration = .init(),
        contentSeed: UInt64 = 0, content: ContentGenerator
    ) {
        self.content = content
        self.configuration = configuration
        let isHeldOut = UserEngine.isHeldOut(profile.id, configuration)
        state = EngineState(
            user: UserFacts(profile: profile, zone: zone, recipient: Recipient(profile), isHeldOut: isHeldOut),
            activity: ActivityState(lastActiveAt: now), copy: CopyState(random: SeededGenerator(seed: contentSeed)))
        state.plan.seriesTimes = hydrationSeriesTimes()
    }

    /// Whether `userID` is in the re-engagement control group (fixed by the id and the configuration).
    static func isHeldOut(_ userID: UserID, _ configuration: EngineConfiguration) -> Bool {
        configuration.holdoutShare > 0
            && Holdout.isHeldOut(userID: userID, share: configuration.holdoutShare, salt: configuration.holdoutSalt)
    }

    public var profile: UserProfile { state.user.profile }
    public var zone: ZoneRules { state.user.zone }
    public var recipient: Recipient { state.user.recipient }
    public var isHeldOut: Bool { state.user.isHeldOut }
    public var lastActiveAt: Instant { state.activity.lastActiveAt }
    /// The highest re-engagement attempt delivered in the current lapse (0: none).
    public var reEngagementAttemptsSent: Int { state.lapse.lastAttemptSent }

    /// Requests the engine believes are pending on the device.
    public var plannedRequestIDs: [RequestID] { state.plan.planned.map { $0.id.requestID } }

    /// When the requests the engine believes pending will fire, soonest first.
    public var plannedFireTimes: [Instant] { state.plan.planned.map(\.fireAt) }

    /// What the engine believes pending, on every channel, soonest first (no copy is made).
    public var planned: [PlannedNotification] { state.plan.planned }

    /// The revision of the user's local plan: the requests the phone schedules itself (the
    /// `local` channel), their content and their times. It grows by one or more at every step
    /// that schedules, replaces or cancels such a request, or moves them to another zone, and
    /// never otherwise: a phone holding the plan of revision `n` holds the current one exactly
    /// when the revision is still `n` (what fired since is gone from both). A change takes it to
    /// at least the change's instant in seconds since the epoch, so it never repeats a number
    /// given before, even after the engine resumed from an older state (a backup, a snapshot
    /// from before revisions were kept); it goes back only in such a resume, until the next
    /// change. Kept in the snapshot.
    public var localPlanRevision: Int { state.plan.localRevision }

    /// Where the last planning pass stopped planning routine reminders (`routineHorizonEnd`);
    /// nil before the first pass.
    public var planHorizonEnd: Instant? { state.plan.lastPassAt.map { routineHorizonEnd(at: $0) } }

    public func lapseStage(at now: Instant) -> LapseStage {
        let idle = now - state.activity.lastActiveAt
        if idle > configuration.churnRiskAfterSeconds { return .churnRisk }
        if idle > configuration.lapseAfterSeconds { return .lapsed }
        return .active
    }

    /// Applies one input at `now` and returns the effects to execute, in order. `phone` says
    /// when the user's phone hears of a change the input makes to its local plan
    /// (`PhoneHearing`): until then, what it holds is committed and the pass plans around it.
    public mutating func handle(_ input: EngineInput, at now: Instant, phone: PhoneHearing = .atOnce) -> [Effect] {
        var effects: [Effect] = []
        let revisionBefore = state.plan.localRevision
        // What fired since the last input is history before anything else looks at the plan;
        // for a move heard of late, what fired before the move (`movePlanned` takes the rest).
        var firedThrough = now
        if case .timeZoneChanged(_, let movedAt?) = input { firedThrough = min(movedAt, now) }
        retireFired(through: firedThrough, into: &effects)
        expireUnanswered(at: now)
        switch input {
        case .appLaunched:
            for job in BackgroundJob.allCases {
                effects.append(
                    .submitBackgroundTask(BackgroundTaskRequest(job: job, earliestBegin: nextRun(of: job, after: now))))
            }
        case .activity(let activity, let occurredAt):
            // Done when the user did it: a late event's day and instant are its own.
            let doneAt = min(occurredAt ?? now, now)
            if doneAt < now { unfireWithdrawn(by: activity, at: doneAt, now: now, into: &effects) }
            recordActivity(activity, at: doneAt)
            if case .appOpened(let sessionSeconds) = activity {
                // An open sent late shows the user awake when they opened, not when it arrived
                // (in the zone of now, and after the opens heard before it: the habit reads the
                // minutes, not their order), and its session holds only what is left of it,
                // never shortening one under way.
                state.activity.recentOpenMinutes.append(zone.localDateTime(at: doneAt).secondOfDay / 60)
                if state.activity.recentOpenMinutes.count > 20 { state.activity.recentOpenMinutes.removeFirst() }
                effects.append(.setBadge(0))
                effects.append(.clearDeliveredNotifications)
                let sessionEnd = doneAt + Int64(sessionSeconds)
                if doneAt == now || sessionEnd > max(now, state.activity.activeUntil ?? now) {
                    startSession(until: sessionEnd, at: now)
                }
            }
        case .notificationResponse(let requestID, let kind, let action):
            respond(to: action, requestID: requestID, kind: kind, at: now, effects: &effects)
        case .backgroundTaskLaunched(let job):
            effects.append(
                .submitBackgroundTask(BackgroundTaskRequest(job: job, earliestBegin: nextRun(of: job, after: now))))
        case .preferencesChanged(let preferences):
            let before = self.profile
            state.user.profile.preferences = preferences
            state.plan.seriesTimes = hydrationSeriesTimes()
            releaseDisabledGroups(at: now, into: &effects)
            rewriteIfShownDifferently(since: before)
        case .profileChanged(var profile):
            let before = self.profile
            profile.timeZone = zone.identifier
            state.user.profile = profile
            state.user.recipient = Recipient(profile)
            state.user.isHeldOut = UserEngine.isHeldOut(profile.id, configuration)
            state.plan.seriesTimes = hydrationSeriesTimes()
            rewriteIfShownDifferently(since: before)
        case .timeZoneChanged(let newZone, let movedAt):
            movePlanned(to: newZone, movedAt: min(movedAt ?? now, now), at: now, into: &effects)
        case .socialEvent(let event):
            receive(event, at: now, into: &effects)
        case .unrecognizedResponse(let requestID, let kind, let actionIdentifier):
            effects.append(
                .trace(
                    TraceEntry(
                        at: now, userID: profile.id, subject: .external(requestID.rawValue), kind: kind,
                        decision: .suppressed, reason: .unknownAction, why: .unknownAction(actionIdentifier)))
            )
        case .contentGenerated(let requestID, let outcome):
            applyCoachCopy(outcome, to: requestID, phone: effectiveHearing(phone, at: now), at: now, into: &effects)
        case .liveActivity(let event):
            effects += state.liveActivities.handle(event, at: now).map(Effect.liveActivity)
        case .notificationPermission(let allowed):
            state.plan.deviceRefuses = !allowed
        case .syncMissed:
            syncMissed(at: now)
        }
        // After the input: a missed sync is news of the phone's hearing.
        let phone = effectiveHearing(phone, at: now)
        plan(at: now, phone: phone, into: &effects)
        notePhoneMustHear(phone, revisionBefore: revisionBefore)
        return effects
    }

    // MARK: - Inputs

    private mutating func recordActivity(_ activity: ActivityKind, at now: Instant) {
        if lapseStage(at: now) != .active { state.lapse.lastAttemptSent = 0 }
        let campaign = campaignDay
        state.activity.lastActiveAt = max(state.activity.lastActiveAt, now)
        if campaignDay != campaign { forgetEarlierCampaigns() }
        let today = zone.localDate(at: now)
        switch activity {
        case .mealLogged(let meal):
            state.activity.markDone(OccurrenceID(.mealReminder, date: today, .meal(meal)), at: now)
        case .workoutCompleted(let durationMinutes):
            markWorkoutsDone(on: today, at: now)
            recordWorkout(at: now, durationMinutes: durationMinutes)
        case .checkInCompleted:
            // Today's check-in reminders are moot; a reflection follows a day later.
            state.activity.markDone(OccurrenceID(.checkInReminder, date: today), at: now)
            scheduleReflection(after: now)
        default: break
        }
    }

    /// The occurrence `id` at `plannedAt`, with its kind's interruption level (from the
    /// preferences) and delivery policy; `plannedAt` is its slot's nominal time, where its window
    /// (`SlotWindow`, if the kind has one) is anchored. A snoozed copy has no window: the user
    /// asked for it later.
    func candidate(_ id: OccurrenceID, at plannedAt: Instant) -> Candidate {
        Candidate(
            id: id, kind: id.kind, plannedAt: plannedAt, level: profile.preferences.interruptionLevel(for: id.kind),
            policy: .standard(for: id.kind),
            windowEnd: id.snooze == 0 ? SlotWindow.of(id.kind)?.end(nominal: plannedAt) : nil)
    }

    private mutating func respond(
        to action: NotificationActionID, requestID: RequestID, kind: NotificationKind, at now: Instant,
        effects: inout [Effect]
    ) {
        learnResponse(ResponseOutcome(action: action), requestID: requestID, kind: kind, at: now)
        if let snoozeSeconds = action.snoozeSeconds, let answered = OccurrenceID(requestID: requestID) {
            snooze(answered, for: snoozeSeconds, at: now)
            effects.append(
                .trace(
                    TraceEntry(
                        at: now, userID: profile.id, subject: .external(requestID.rawValue), kind: kind,
                        decision: .deferred,
                        reason: .snoozed, fireAt: now + snoozeSeconds, why: .snoozedFor(minutes: snoozeSeconds / 60))))
            return
        }
        if action != .dismiss { recordActivity(.appOpened(sessionSeconds: 0), at: now) }
        switch action {
        case .completeWorkout, .skipTodayAction, .skipWorkout:
            markWorkoutsDone(on: zone.localDate(at: now), at: now)
        default: break
        }
        if let link = ResponseRouting.deepLink(for: action, kind: kind) { effects.append(.openDeepLink(link)) }
    }

    /// The device re-matches wall-clock (calendar) triggers in its new zone; follow it, so the
    /// plan knows when each pending request will now fire. One whose wall time had passed in the
    /// new zone when the device moved (`movedAt`) was dropped by the device; it is planned again
    /// at once if still worth sending. One the phone held whose wall time came between the move
    /// and `now` fired on the phone (`firedAfterMoving`): it is history, not planned again.
    private mutating func movePlanned(
        to newZone: ZoneRules, movedAt: Instant, at now: Instant, into effects: inout [Effect]
    ) {
        state.user.zoneChangedAt = now
        let oldZone = zone
        let firedOnPhone = firedAfterMoving(from: oldZone, to: newZone, movedAt: movedAt, at: now)
        phoneMoves(from: oldZone, to: newZone, at: now)
        state.user.zone = newZone
        state.user.profile.timeZone = newZone.identifier
        // Opens are local minutes of the zone they happened in: the habitual active time is held
        // until enough opens exist in the new zone (a mean across zones names no real time).
        state.activity.recentOpenMinutes = []
        // Digests arrive at the user's chosen local time, wherever the user is.
        for index in state.social.groups.indices where state.social.groups[index].isDigest {
            let weekly = state.social.groups[index].mode == .weeklyDigest
            state.social.groups[index].sendAt = digestTime(weekly: weekly, after: now)
        }
        var moved: [PlannedNotification] = []
        for item in state.plan.planned {
            if let firedAt = firedOnPhone[item.id] {
                var fired = item
                fired.fireAt = firedAt
                _ = noteFired(fired)
                continue
            }
            // A push, or a date trigger, fired at its instant wherever the phone was.
            if item.fireAt <= now && (!item.followsWallClock || ChannelPolicy.channel(for: item.kind) != .local) {
                _ = noteFired(item)
                continue
            }
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
            // Due in the old zone by now, but not in the new one (a move heard of late): the
            // server's copy took it as due, so the pass places it afresh and writes it again.
            if item.fireAt <= now && copy.fireAt > now { continue }
            moved.append(copy)
            // The device dropped a request whose wall time has now passed; the pass that follows
            // in this same input plans it again from now, within its original deadline.
            guard copy.fireAt > now else { continue }
            record(
                copy.id, copy.fireAt == copy.plannedAt ? .scheduled : .deferred, .timeZoneChanged,
                plannedAt: copy.plannedAt, fireAt: copy.fireAt, level: nil, at: now, into: &effects)
        }
        state.plan.planned = moved.sorted(by: PlannedNotification.firesBefore)
        // Fired from a copy the plan no longer holds (the phone had not heard of its change):
        // still history for the caps.
        for (id, firedAt) in firedOnPhone where state.plan.fired[id] == nil {
            state.plan.fired[id] = firedAt
            state.plan.ledger.insert(firedAt)
        }
        if !firedOnPhone.isEmpty {
            state.plan.lastKey = nil
            // Out of the server's copy of the plan too: its rows still hold the old instants.
            effects.append(.cancel(requestIDs: firedOnPhone.keys.map { $0.requestID }.sorted()))
        }
        if !firedOnPhone.isEmpty || moved.contains(where: { ChannelPolicy.channel(for: $0.kind) == .local }) {
            state.plan.countLocalChange(at: now)
        }
    }

    /// Non-urgent notifications due during an app session wait until it ends. The session's end
    /// reaches the plan (`PlanKey.sessionHold`) when it can hold something back: a notification
    /// or a group due before it, or a session still running when this one replaces it (its end
    /// moves, earlier or later, and what a pass since held or dropped for it is weighed again).
    private mutating func startSession(until end: Instant, at now: Instant) {
        let replacesASession = state.activity.activeUntil.map { $0 > now } ?? false
        state.activity.activeUntil = end
        if replacesASession || state.plan.planned.contains(where: { $0.fireAt < end })
            || state.social.groups.contains(where: { $0.sendAt < end })
        {
            state.activity.sessionHold = end
        }
    }

    private mutating func markWorkoutsDone(on date: LocalDate, at now: Instant) {
        for workout in profile.preferences.workoutSchedule where workout.weekday == date.weekday {
            state.activity.markDone(
                OccurrenceID(.workoutReminder, date: date, .minuteOfDay(workout.time.minutesSinceMidnight)), at: now)
        }
        // The day's coaching around the workout is moot too.
        if let habit = state.coaching.habits.habit(for: date.weekday) {
            for kind in [NotificationKind.preWorkout, .postWorkoutCheckIn] {
                state.activity.markDone(
                    OccurrenceID(kind, date: date, .minuteOfDay(habit.time.minutesSinceMidnight)), at: now)
            }
        }
        state.activity.markDone(OccurrenceID(.streakReminder, date: date), at: now)
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
}

extension UserEngine {
    /// A change of how notifications look (privacy level, name, language, style, sound,
    /// interruption levels) applies to what is already planned too, not only to what is planned
    /// next: a user who turns privacy to private must not find their name on the lock screen
    /// tomorrow morning. Every planned request, daily series included, is written again by the
    /// pass that follows in the same step (same identifier, so it replaces the pending one; a
    /// series the pass no longer plans is cancelled as usual), and the coach's copy, written for
    /// the old name, privacy level, language or style, is asked for again.
    mutating func rewriteIfShownDifferently(since old: UserProfile) {
        let new = profile
        let rewordedByCoach =
            old.privacyLevel != new.privacyLevel || old.displayName != new.displayName || old.locale != new.locale
            || old.motivationalStyle != new.motivationalStyle
        guard
            rewordedByCoach || old.preferences.soundEnabled != new.preferences.soundEnabled
                || old.preferences.interruptionLevels != new.preferences.interruptionLevels
        else { return }
        // No candidate has this revision: the diff schedules each again. The pass that follows
        // (the profile's revision changed, so it runs) replaces every planned entry.
        for index in state.plan.planned.indices { state.plan.planned[index].revision = -1 }
        if rewordedByCoach { state.copy.coachCopy = OccurrenceMap() }
    }
}
