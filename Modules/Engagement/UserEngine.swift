public import Models
import Scheduling
import Content

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
    /// The last activity (app open, workout, meal, log, chat); starts at creation.
    public private(set) var lastActiveAt: Instant
    /// Re-engagement nudges delivered in the current lapse.
    public private(set) var reEngagementAttemptsSent: Int = 0

    /// What the platform holds, as the engine planned it, sorted by fire time.
    private(set) var planned: [PlannedNotification] = []
    /// Fire times already passed, for the rolling caps.
    private var ledger = CapLedger()
    /// Identifiers already fired (kept a few days), so an occurrence is never planned twice.
    private var fired: [String: Instant] = [:]
    /// Occurrences made moot by what the user did (meal logged, workout done, skipped).
    private var done: [String: Instant] = [:]
    /// Snoozed occurrences waiting to come back.
    private var snoozed: [Candidate] = []
    /// The last decision traced per occurrence, so a pass traces only what changed.
    private var lastTraced: [String: TracedDecision] = [:]

    public init(profile: UserProfile, zone: ZoneRules, now: Instant, configuration: EngineConfiguration = .init()) {
        self.profile = profile
        self.zone = zone
        self.configuration = configuration
        self.lastActiveAt = now
    }

    /// Requests the engine believes are pending on the device.
    public var plannedRequestIDs: [String] { planned.map(\.id) }

    public func lapseStage(at now: Instant) -> LapseStage {
        let idle = now - lastActiveAt
        if idle > configuration.churnRiskAfterSeconds { return .churnRisk }
        if idle > configuration.lapseAfterSeconds { return .lapsed }
        return .active
    }

    /// Applies one input at `now` and returns the effects to execute, in order.
    public mutating func handle(_ input: EngineInput, at now: Instant) -> [Effect] {
        var effects: [Effect] = []
        switch input {
        case .appLaunched:
            for job in [BackgroundJob.lapseDetection, .patternAnalysis] {
                effects.append(.submitBackgroundTask(BackgroundTaskRequest(job: job, earliestBegin: nextRun(of: job, after: now))))
            }
        case .activity(let activity):
            recordActivity(activity, at: now)
            if case .appOpened = activity { effects.append(.setBadge(0)) }
        case .notificationResponse(let requestID, let kind, let action):
            respond(to: action, requestID: requestID, kind: kind, at: now, effects: &effects)
        case .backgroundTaskLaunched(let job):
            effects.append(.submitBackgroundTask(BackgroundTaskRequest(job: job, earliestBegin: nextRun(of: job, after: now))))
        case .preferencesChanged(let preferences):
            profile.preferences = preferences
        case .timeZoneChanged(let newZone):
            zone = newZone
            profile.timeZone = newZone.identifier
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
            done[Occurrence.meal(today, meal)] = now
        case .workoutCompleted:
            for workout in profile.preferences.workoutSchedule where workout.weekday == today.weekday {
                done[Occurrence.workout(today, workout.time)] = now
            }
        default: break
        }
    }

    private mutating func respond(
        to action: NotificationActionID, requestID: String, kind: NotificationKind, at now: Instant,
        effects: inout [Effect]
    ) {
        let snoozeSeconds: Int64? =
            switch action {
            case .snooze30, .snoozeReminder: 30 * .secondsPerMinute
            case .snooze: .secondsPerHour
            default: nil
            }
        if let snoozeSeconds {
            let id = requestID.hasSuffix(".snooze") ? requestID : requestID + ".snooze"
            fired.removeValue(forKey: id)
            snoozed.removeAll { $0.id == id }
            snoozed.append(
                Candidate(
                    id: id, kind: kind, plannedAt: now + snoozeSeconds,
                    level: profile.preferences.interruptionLevel(for: kind), policy: .standard(for: kind)))
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
            for workout in profile.preferences.workoutSchedule where workout.weekday == today.weekday {
                done[Occurrence.workout(today, workout.time)] = now
            }
        default: break
        }
        if let link = ResponseRouting.deepLink(for: action, kind: kind) { effects.append(.openDeepLink(link)) }
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

    private mutating func plan(at now: Instant, into effects: inout [Effect]) {
        retireFired(through: now)
        var outcomes: [(Candidate, RuleOutcome)] = []
        var suppressed: [(Candidate, ReasonCode, String)] = []
        var candidates = routineCandidates(at: now) + snoozed
        appendReEngagement(to: &candidates, suppressed: &suppressed, at: now)
        candidates.sort { ($0.plannedAt, $0.id) < ($1.plannedAt, $1.id) }

        let previous = Dictionary(uniqueKeysWithValues: planned.map { ($0.id, $0) })
        var ledger = self.ledger
        var next: [PlannedNotification] = []
        let slotBudget = configuration.pendingLimit - configuration.reservedSlots
        for candidate in candidates where next.count < slotBudget {
            guard fired[candidate.id] == nil else { continue }
            if done[candidate.id] != nil {
                suppressed.append((candidate, .alreadyDone, "already done"))
                continue
            }
            // An occurrence whose time passed before it was ever planned is not sent late.
            guard candidate.plannedAt > now || previous[candidate.id] != nil else { continue }
            let outcome = DeliveryRules.evaluate(
                candidate, preferences: profile.preferences, zone: zone, ledger: ledger)
            if case .send(let fireAt, _, _) = outcome {
                guard fireAt > now else { continue }
                ledger.insert(fireAt)
                next.append(PlannedNotification(candidate: candidate, fireAt: fireAt))
            }
            outcomes.append((candidate, outcome))
        }
        next.sort { ($0.fireAt, $0.id) < ($1.fireAt, $1.id) }

        // Cancel what the new plan no longer holds, with the reason when one is known.
        let nextIDs = Set(next.map(\.id))
        var reasons: [String: (ReasonCode, String)] = [:]
        for (candidate, reason, detail) in suppressed { reasons[candidate.id] = (reason, detail) }
        for (candidate, outcome) in outcomes {
            if case .drop(let reason, let detail) = outcome { reasons[candidate.id] = (reason, detail) }
        }
        let cancelled = planned.filter { !nextIDs.contains($0.id) }
        if !cancelled.isEmpty {
            effects.append(.cancel(requestIDs: cancelled.map(\.id)))
            for old in cancelled {
                let (reason, detail) = reasons[old.id] ?? cancellationReason(for: old, at: now)
                record(
                    TraceEntry(
                        at: now, userID: profile.id, requestID: old.id, kind: old.kind, decision: .cancelled,
                        reason: reason, plannedAt: old.plannedAt, detail: detail), into: &effects)
            }
        }
        for (candidate, outcome) in outcomes {
            switch outcome {
            case .send(let fireAt, let reason, let detail):
                guard nextIDs.contains(candidate.id), previous[candidate.id]?.fireAt != fireAt else { continue }
                let request = makeRequest(for: candidate, fireAt: fireAt, now: now)
                effects.append(.schedule(request, fireAt: fireAt))
                let deferred = fireAt != candidate.plannedAt
                record(
                    TraceEntry(
                        at: now, userID: profile.id, requestID: candidate.id, kind: candidate.kind,
                        decision: deferred ? .deferred : .scheduled, reason: reason, plannedAt: candidate.plannedAt,
                        fireAt: fireAt, level: candidate.level, detail: detail), into: &effects)
            case .drop(let reason, let detail):
                guard previous[candidate.id] == nil else { continue }  // traced as cancelled above
                record(
                    TraceEntry(
                        at: now, userID: profile.id, requestID: candidate.id, kind: candidate.kind, decision: .dropped,
                        reason: reason, plannedAt: candidate.plannedAt, level: candidate.level, detail: detail),
                    into: &effects)
            }
        }
        for (candidate, reason, detail) in suppressed where previous[candidate.id] == nil {
            record(
                TraceEntry(
                    at: now, userID: profile.id, requestID: candidate.id, kind: candidate.kind, decision: .suppressed,
                    reason: reason, plannedAt: candidate.plannedAt, detail: detail), into: &effects)
        }
        planned = next
    }

    /// Moves planned notifications whose time has come into the ledger of sent ones.
    private mutating func retireFired(through now: Instant) {
        var firedCount = 0
        for item in planned {
            guard item.fireAt <= now else { break }
            firedCount += 1
            fired[item.id] = item.fireAt
            ledger.insert(item.fireAt)
            if item.kind == .reEngagement { reEngagementAttemptsSent += 1 }
            snoozed.removeAll { $0.id == item.id }
        }
        planned.removeFirst(firedCount)
        let keepFrom = now - 2 * .secondsPerDay
        ledger.prune(before: now - .secondsPerDay - .secondsPerHour)
        if fired.count > 256 { fired = fired.filter { $0.value >= keepFrom - 16 * .secondsPerDay } }
        if done.count > 64 { done = done.filter { $0.value >= keepFrom } }
        if lastTraced.count > 512 { lastTraced = lastTraced.filter { $0.value.at >= keepFrom } }
        snoozed.removeAll { $0.plannedAt + $0.policy.stalenessSeconds < now }
    }

    private func cancellationReason(for old: PlannedNotification, at now: Instant) -> (ReasonCode, String) {
        if !profile.preferences.isEnabled(old.kind) { return (.kindDisabled, "\(old.kind.rawValue) is disabled") }
        if old.kind == .reEngagement && lapseStage(at: now) == .active && lastActiveAt > now - .secondsPerHour {
            return (.userReturned, "active again at \(zone.formatted(lastActiveAt))")
        }
        return (.replanned, "")
    }

    private mutating func record(_ entry: TraceEntry, into effects: inout [Effect]) {
        let decision = TracedDecision(decision: entry.decision, reason: entry.reason, fireAt: entry.fireAt, at: entry.at)
        if let last = lastTraced[entry.requestID], last.sameOutcome(as: decision) { return }
        lastTraced[entry.requestID] = decision
        effects.append(.trace(entry))
    }

    // MARK: - Candidates

    /// Routine reminders over the horizon, in the user's zone, paused once the user is lapsed.
    private func routineCandidates(at now: Instant) -> [Candidate] {
        let preferences = profile.preferences
        let pauseAt = lastActiveAt + configuration.lapseAfterSeconds
        let end = min(now + configuration.horizonSeconds, pauseAt)
        guard end > now - .secondsPerDay else { return [] }
        var result: [Candidate] = []
        result.reserveCapacity(64)
        func add(_ kind: NotificationKind, _ id: String, _ date: LocalDate, _ time: LocalTimeOfDay) {
            guard preferences.isEnabled(kind) else { return }
            let at = zone.instant(for: LocalDateTime(date: date, time: time))
            guard at <= end, at > now - 4 * .secondsPerHour else { return }
            result.append(
                Candidate(
                    id: id, kind: kind, plannedAt: at, level: preferences.interruptionLevel(for: kind),
                    policy: .standard(for: kind)))
        }
        var date = zone.localDate(at: now - 4 * .secondsPerHour)
        let lastDate = zone.localDate(at: end)
        while date <= lastDate {
            add(.morningGreeting, Occurrence.morning(date), date, preferences.morningTime)
            for meal in MealType.allCases { add(.mealReminder, Occurrence.meal(date, meal), date, meal.defaultTime) }
            if let frequency = preferences.hydration {
                var minute = preferences.wakeTime.minutesSinceMidnight
                while minute < preferences.sleepTime.minutesSinceMidnight {
                    let time = LocalTimeOfDay(minutesSinceMidnight: minute)
                    add(.hydration, Occurrence.hydration(date, time), date, time)
                    minute += frequency.intervalMinutes
                }
            }
            for workout in preferences.workoutSchedule where workout.weekday == date.weekday {
                let lead = preferences.workoutReminderLeadMinutes
                let minute = workout.time.minutesSinceMidnight - lead
                let (reminderDate, reminderMinute) = minute >= 0 ? (date, minute) : (date.adding(days: -1), minute + 1_440)
                add(
                    .workoutReminder, Occurrence.workout(date, workout.time), reminderDate,
                    LocalTimeOfDay(minutesSinceMidnight: reminderMinute))
            }
            date = date.adding(days: 1)
        }
        return result
    }

    /// The lapse campaign: nudges planned ahead at the days after the last activity, so they
    /// fire even if the app never runs again, and are cancelled the moment the user returns.
    private func appendReEngagement(
        to candidates: inout [Candidate], suppressed: inout [(Candidate, ReasonCode, String)], at now: Instant
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
        let time = profile.communication.preferredTimes.first ?? configuration.nudgeTime
        let lapseDate = zone.localDate(at: lastActiveAt)
        for (index, day) in days.enumerated() {
            let due = lastActiveAt + Int64(day) * .secondsPerDay
            var date = zone.localDate(at: due)
            if zone.instant(for: LocalDateTime(date: date, time: time)) < due { date = date.adding(days: 1) }
            let candidate = Candidate(
                id: Occurrence.reEngagement(lapseDate, attempt: index + 1), kind: .reEngagement,
                plannedAt: zone.instant(for: LocalDateTime(date: date, time: time)),
                level: preferences.interruptionLevel(for: .reEngagement), policy: .standard(for: .reEngagement))
            if response == .giveMeSpace {
                // Silence, and the trace says so, once the user is actually away.
                if due <= now {
                    suppressed.append((candidate, .absenceGiveMeSpace, "absence response give_me_space"))
                }
                return
            }
            candidates.append(candidate)
        }
    }

    private func makeRequest(for candidate: Candidate, fireAt: Instant, now: Instant) -> NotificationRequest {
        let local = zone.localDateTime(at: fireAt)
        let trigger: NotificationTrigger =
            local.second == 0 && zone.instant(for: local) == fireAt
            ? .calendar(CalendarMatch(local), repeats: false) : .date(fireAt)
        var context = CopyContext(firstName: profile.firstName)
        if candidate.kind == .mealReminder { context.meal = Occurrence.meal(of: candidate.id) }
        if candidate.kind == .reEngagement {
            let daysAway = Int((fireAt - lastActiveAt) / .secondsPerDay)
            context.daysAway = daysAway
            context.stronger =
                profile.communication.absenceResponse == .checkInOnMe && daysAway >= configuration.strongerFromDay
        }
        if candidate.kind == .workoutReminder {
            context.workoutType = profile.preferences.workoutSchedule.first { candidate.id.hasSuffix(Occurrence.clock($0.time)) }?.type
        }
        let copy = TemplateCopy.render(
            candidate.kind, style: profile.motivationalStyle, context: context, variant: Int(stableHash(candidate.id) % 997))
        let content = NotificationContent(
            kind: candidate.kind, title: copy.title, body: copy.body, interruptionLevel: candidate.level,
            relevanceScore: ResponseRouting.relevance(of: candidate.kind),
            sound: profile.preferences.soundEnabled ? ResponseRouting.sound(of: candidate.kind) : nil,
            deepLink: ResponseRouting.defaultLink(for: candidate.kind, meal: context.meal))
        return NotificationRequest(identifier: candidate.id, content: content, trigger: trigger)
    }
}

/// A notification the engine has handed to the platform.
struct PlannedNotification: Hashable, Sendable {
    var id: String
    var kind: NotificationKind
    var plannedAt: Instant
    var fireAt: Instant

    init(candidate: Candidate, fireAt: Instant) {
        id = candidate.id
        kind = candidate.kind
        plannedAt = candidate.plannedAt
        self.fireAt = fireAt
    }
}

struct TracedDecision: Hashable, Sendable {
    var decision: TraceDecision
    var reason: ReasonCode
    var fireAt: Instant?
    var at: Instant

    func sameOutcome(as other: TracedDecision) -> Bool {
        decision == other.decision && reason == other.reason && fireAt == other.fireAt
    }
}

/// Request identifiers: one per occurrence, derived from the kind, the local date and the slot,
/// so re-planning replaces instead of duplicating, and a fired occurrence is never planned again.
enum Occurrence {
    static func clock(_ time: LocalTimeOfDay) -> String { "\(time.hour * 100 + time.minute)" }
    static func morning(_ date: LocalDate) -> String { "morningGreeting.\(date)" }
    static func meal(_ date: LocalDate, _ meal: MealType) -> String { "mealReminder.\(date).\(meal.rawValue)" }
    static func hydration(_ date: LocalDate, _ time: LocalTimeOfDay) -> String { "hydration.\(date).\(clock(time))" }
    static func workout(_ date: LocalDate, _ time: LocalTimeOfDay) -> String {
        "workoutReminder.\(date).\(clock(time))"
    }
    static func reEngagement(_ lapseDate: LocalDate, attempt: Int) -> String { "reEngagement.\(lapseDate).\(attempt)" }
    static func meal(of id: String) -> MealType? {
        id.split(separator: ".").last.flatMap { MealType(rawValue: String($0)) }
    }
}

/// FNV-1a, for stable choices derived from identifiers.
func stableHash(_ text: String) -> UInt64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in text.utf8 {
        hash ^= UInt64(byte)
        hash &*= 0x100_0000_01b3
    }
    return hash
}
