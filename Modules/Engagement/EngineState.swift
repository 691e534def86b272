public import Content
public import LiveActivity
public import Models
public import Scheduling

/// Everything one user's engine knows: a plain value, its fields grouped by the part of the
/// engine that owns them. It is what a runtime saves and restores; the engine's dependencies
/// (configuration, copy writer) are not part of it.
public struct EngineState: Sendable {
    /// Who the user is and where they are.
    public internal(set) var user: UserFacts
    /// What the user did: activity, sessions, done things.
    public internal(set) var activity: ActivityState
    /// The planner's: what the platform holds, the caps' history, what was traced.
    var plan = PlanState()
    /// The lapse campaign's.
    public internal(set) var lapse = LapseState()
    /// Snoozed copies and one-off follow-ups (reflection, achievement).
    var reminders = ReminderState()
    /// Social items waiting to go out.
    var social = SocialState()
    /// Coaching: habits, streak, response learning.
    var coaching = CoachingState()
    /// Copy: template variety, the coach's accepted copy.
    var copy: CopyState
    /// The workout and meal Live Activities running.
    public internal(set) var liveActivities = LiveActivityTracker()
}

/// Who the user is and where they are.
public struct UserFacts: Sendable {
    public var profile: UserProfile {
        didSet { profileRevision &+= 1 }
    }
    /// Counts the changes of `profile` (preferences, zone) since the engine started or was
    /// restored; the plan's key compares it instead of the whole preferences value.
    public private(set) var profileRevision = 0
    public var zone: ZoneRules
    /// Who the copy is for (name, privacy level), derived from the profile.
    public var recipient: Recipient
    /// Whether the user is in the re-engagement control group (fixed by the id and the configuration).
    public var isHeldOut: Bool
    /// When the device last changed time zone.
    public var zoneChangedAt: Instant?
}

/// What the user did.
public struct ActivityState: Sendable {
    /// The last activity (app open, workout, meal, log, chat); starts at creation.
    public var lastActiveAt: Instant
    /// The end of the user's current app session: non-urgent notifications wait until then.
    public var activeUntil: Instant?
    /// The end of the last session that could hold something back (a planned notification or a
    /// social group due before it ended, or a session still running that it replaced); a session
    /// that holds nothing changes no plan (`startSession`).
    var sessionHold: Instant?
    /// Local minutes of the last app opens (at most 20), for the habitual active time.
    public var recentOpenMinutes: [Int] = [] {
        didSet { habitualActiveTime = UserEngine.habitualActiveTime(opens: recentOpenMinutes) }
    }
    /// The circular mean of `recentOpenMinutes` (from five of them), kept with them.
    public private(set) var habitualActiveTime: LocalTimeOfDay?
    /// Occurrences made moot by what the user did (meal logged, workout done, skipped), with
    /// the latest instant each was done at.
    var done = OccurrenceMap<Instant>()

    /// Records `id` done at `instant`, keeping the later instant when it was done already: an
    /// event sent late (queued offline) never moves it back, so what withdrawals count after
    /// (`HeardActivity`) never goes back past one heard of.
    mutating func markDone(_ id: OccurrenceID, at instant: Instant) {
        done[id] = max(done[id] ?? instant, instant)
    }
}

/// The planner's state.
struct PlanState: Sendable {
    /// What the platform holds, as the engine planned it, soonest first.
    var planned: [PlannedNotification] = []
    /// The device refuses local notifications (`EngineInput.notificationPermission`): nothing is
    /// planned on the local channel until it allows them again.
    var deviceRefuses = false
    /// Fire times already passed, for the rolling caps.
    var ledger = CapLedger()
    /// What the user's phone was last given of the local plan (`UserEngine.phoneApplied`): each
    /// one-off request still ahead, at the instant the phone fires it. Empty where the engine
    /// runs on the phone itself. Whatever changes it after a pass (a pull, a firing, a move of
    /// zone) keeps what it was at the pass first (`holdsAtLastPass`).
    var phoneHolds = OccurrenceMap<Instant>() {
        didSet {
            if lastKey != nil, holdsAtLastPass == nil, oldValue != phoneHolds { holdsAtLastPass = oldValue }
        }
    }
    /// How the phone was to hear of the last pass (`PhoneHearing`), which decided what it took
    /// as committed: a restored engine rebuilds that pass's key with it.
    var lastPassPhone = PhoneHearing.atOnce
    /// When the phone was to hear, at the latest, of the first change to its plan it has not
    /// pulled since (`PhoneHearing.by` of the step that made it); nil when it pulled every
    /// change. Past that instant without a pull, the phone is not hearing (offline, or not woken
    /// by the sync), so everything it holds is committed until it pulls (`effectiveHearing`).
    var phoneHearsBy: Instant?
    /// Occurrences already fired (kept about three days), so an occurrence is never planned twice.
    var fired = OccurrenceMap<Instant>()
    /// The last decision traced per occurrence, so a pass traces only what changed.
    var lastTraced = OccurrenceMap<TracedDecision>()
    /// What the last pass was computed from; a pass with an equal key would change nothing. An
    /// input that changes only what moves nothing (`lastKeyMatches`, a fired group in
    /// `retireFired`) updates it in place.
    var lastKey: PlanKey?
    /// When the last pass ran (a snapshot recomputes `lastKey` for this instant).
    var lastPassAt: Instant?
    /// What the phone held when the last pass ran, kept at the first change since (a pull,
    /// `UserEngine.phoneApplied`; a copy's time passing, `retireFired`); nil while unchanged, and
    /// meaningless once the key is forgotten (a snapshot then stores none). The kept key still
    /// decides the next input (`lastKeyMatches` compares what it takes as committed and held); a
    /// snapshot stores these holds, so its reader rebuilds that key from them, not from the holds
    /// now.
    var holdsAtLastPass: OccurrenceMap<Instant>?
    /// The candidates the last pass handed to the planner, in its order (derived, like `lastKey`;
    /// nil before the first pass). Lets an input that changes only what is done or the response
    /// counts keep the plan (`doneChangesLeaveThePlan`, `responsesKeepTheOrder`).
    var lastOrder: [OrderedCandidate]?
    /// The earliest time the last pass planned a lapse nudge for (derived, like `lastKey`). A
    /// nudge whose time passed unsent (a cap dropped it) moves to the same time the next day,
    /// from the clock alone: once `now` reaches this, the key no longer describes the plan.
    var nextNudgeAt: Instant?
    /// The hydration series' times, derived from the preferences (nil: no series allowed).
    var seriesTimes: [LocalTimeOfDay]?
    /// Counts the changes of what the phone must hold on the local channel (`localPlanRevision`).
    var localRevision = 0

    /// Counts a change of the local plan at `now`: the revision becomes the later of one past
    /// the last and the change's instant in seconds since the epoch. So it never repeats a
    /// number a phone may hold with another plan, even when the engine resumes from an older
    /// state (a backup restored, a snapshot written before revisions were kept, which reads 0).
    mutating func countLocalChange(at now: Instant) {
        localRevision = max(localRevision &+ 1, Int(now.secondsSinceEpoch))
    }
}

/// The lapse campaign's state.
public struct LapseState: Sendable {
    /// The highest attempt of the campaign delivered in the current lapse (0: none). Attempts
    /// go out in order, so none up to it is ever planned again, and it bounds how many went out.
    public var lastAttemptSent = 0
    /// The last nudge times and what they were computed from.
    var cache: (inputs: ReEngagementInputs, times: [Int64])?
}

/// Snoozed copies and one-off follow-ups.
struct ReminderState: Sendable {
    /// Snoozed copies waiting to come back.
    var snoozed: [Candidate] = []
    /// One-off follow-ups of something the user did (a reflection a day after a check-in, an achievement).
    var followUps: [Candidate] = []
}

/// Social items waiting to go out.
struct SocialState: Sendable {
    /// Singles, batches and digests not yet sent.
    var groups: [NotificationGroup] = []
    /// Numbers social occurrences; wraps within 15 bits.
    var groupSequence = 0
}

/// The coaching state: habits, streak, response learning.
struct CoachingState: Sendable {
    /// Habitual workout times per weekday, from completed workouts.
    var habits = WorkoutHabits()
    var streak = WorkoutStreak()
    /// Starts of the last workouts (at most 32), for the weekly review.
    var recentWorkouts: [LocalDateTime] = []
    /// How the user answers each slot (a kind, and which occurrence of the day) at each hour.
    var responses = ResponseStats()
    /// The timing rules `responses` implies for the adjustable kinds' slots (only those not `.keep`);
    /// refreshed whenever a response is learned.
    var timing: [TimingRule] = []
    /// Fired notifications of adjustable kinds not yet answered (ignored after three hours).
    var unanswered: [(id: OccurrenceID, firedAt: Instant)] = []
}

/// Copy state.
struct CopyState: Sendable {
    /// The last template and body per kind, so the same body never comes twice in a row.
    var templateMemory = TemplateMemory()
    /// Template choices; seeded by the caller, so runs are reproducible.
    var random: SeededGenerator
    /// The coach's accepted copy per occurrence (asked once per occurrence; a re-plan keeps it).
    var coachCopy = OccurrenceMap<CoachCopy>()
}

/// One non-trivial timing rule: `slot` at local `hour` (its nominal hour) is shifted or backed off.
struct TimingRule: Hashable, Sendable {
    var slot: LearningSlot
    var hour: Int
    var adjustment: TimingAdjustment
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
    var enabled: Bool
    var communication: CommunicationPreferences
    /// The preferences' wake and sleep times: the local night nudges keep out of.
    var wakeTime: LocalTimeOfDay
    var sleepTime: LocalTimeOfDay
    /// Recent opens: the evidence that the user is awake at night.
    var opens: [Int]
    var lastAttemptSent: Int
}

/// Everything a planning pass reads besides the clock's position inside the horizon, derived
/// from the state's values: a pass whose key equals the last pass's would change nothing, so
/// it is skipped, unless the clock alone moved the plan (`UserEngine.planMovesWithClock`).
/// Cheap fields come first (equality stops at the first difference).
struct PlanKey: Equatable, Sendable {
    var profileRevision: Int
    var lapseStage: LapseStage
    var horizonEnd: Instant
    /// The local day whose streak reminder the pass proposes (`streakAtRiskDay`): at local
    /// midnight a streak comes to be at risk, or stops being, before the horizon's end moves.
    /// The only candidate the day itself decides; another change of day moves nothing.
    var streakAtRiskDay: Int64?
    var zone: String
    var sessionHold: Instant?
    var reEngagementTimes: [Int64]
    /// The last workout recorded: habits, the streak and the week's log change with it.
    var lastWorkout: LocalDateTime?
    var timing: [TimingRule]
    var snoozed: [Candidate]
    var followUps: [Candidate]
    var groups: [NotificationGroup]
    var done: OccurrenceMap<Instant>
    var deviceRefuses: Bool
    /// The response counts, when an attention budget orders the candidates by them
    /// (`AttentionValue`): every response learned then moves the order. Nil without a budget,
    /// where only the timing rules they imply (`timing`) reach the plan.
    var budgetResponses: ResponseStats?
    /// What the pass took as committed (`UserEngine.committed(at:phone:)`): the phone's copies
    /// are placed first, so another set may plan otherwise.
    var committed: OccurrenceMap<Instant>
    /// The phone's other copies the pass placed pushes around (`UserEngine.heldLater`).
    var heldLater: OccurrenceMap<Instant>

    /// Whether every field but the nudge times, what is committed and held later (which the caller works out), what is done and
    /// the response counts (which may change without changing the plan) holds `engine`'s value
    /// now, as `planKey` would build it: `lastKeyMatches` asks this instead of building a key.
    /// Kept next to the fields, so a new one goes in here too (a test checks).
    func holdsStoredInputs(
        of engine: UserEngine, lapseStage: LapseStage, horizonEnd: Instant, streakAtRiskDay: Int64?
    ) -> Bool {
        profileRevision == engine.state.user.profileRevision && self.lapseStage == lapseStage
            && self.horizonEnd == horizonEnd && self.streakAtRiskDay == streakAtRiskDay
            && zone == engine.zone.identifier
            && sessionHold == engine.state.activity.sessionHold
            && lastWorkout == engine.state.coaching.recentWorkouts.last && timing == engine.state.coaching.timing
            && snoozed == engine.state.reminders.snoozed && followUps == engine.state.reminders.followUps
            && groups == engine.state.social.groups && deviceRefuses == engine.state.plan.deviceRefuses
    }
}

struct TracedDecision: Hashable, Sendable {
    var decision: TraceDecision
    var reason: ReasonCode
    var fireAt: Instant?
    var plannedAt: Instant
}
