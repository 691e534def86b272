public import Models

/// The rules by which the engine runs Live Activities, within ActivityKit's limits
/// (`LiveActivityLimits`).
public enum LiveActivityRules {
    /// Priority-10 commands per activity in any hour. Apple's budget is unpublished (about 15 an
    /// hour, reported); 12 leaves room for the app's own updates. Beyond it commands go at
    /// priority 5, which the budget does not count.
    public static let highPriorityPerHour = 12
    /// An update this soon after the last command of its activity is dropped unless it is
    /// significant (a new exercise, a new logged item): the next one carries the whole state.
    public static let minUpdateIntervalSeconds: Int64 = 15
    /// A workout's content goes stale five minutes after it was sent: a paused phone shows the
    /// figures as out of date rather than as current.
    public static let workoutStaleAfterSeconds: Int64 = 300
    /// A meal window's content goes stale after two hours without a logged item.
    public static let mealStaleAfterSeconds: Int64 = 2 * .secondsPerHour
    /// A finished workout's summary stays on the Lock Screen 15 minutes.
    public static let workoutDismissAfterSeconds: Int64 = 15 * 60
    /// A closed meal window's summary stays an hour.
    public static let mealDismissAfterSeconds: Int64 = .secondsPerHour
}

/// The Live Activities the engine runs for one user, and the commands each app event makes
/// (a pure state machine; the engine keeps it in its state and its snapshot).
///
/// - At most one activity per kind: a workout started while one runs ends the old one at once
///   (dismissed immediately) before the new one starts.
/// - An activity older than `LiveActivityLimits.maxActiveSeconds` has been ended by the system:
///   it is forgotten, and an update for it makes no command.
/// - An update without a running activity of its kind, or identical to what was last sent,
///   makes no command; one within `minUpdateIntervalSeconds` of the last command makes none
///   unless it is significant.
/// - Every command carries a stale date (`staleAfterSeconds` from now) and, on `end`, a
///   dismissal a short time after the end.
/// - Priority 10 while the activity's last hour holds fewer than `highPriorityPerHour` of them
///   and the command is a start, an end or a significant update; 5 otherwise.
/// - A command whose attributes and state exceed 4 KB are not made (the app would be refused).
public struct LiveActivityTracker: Codable, Hashable, Sendable {
    /// One running activity.
    public struct Running: Codable, Hashable, Sendable {
        public var id: String
        public var attributes: LiveActivityAttributes
        public var startedAt: Instant
        public var lastSent: LiveActivityContent
        public var lastSentAt: Instant
        /// When its priority-10 commands of the last hour went out.
        public var highPriorityAt: [Instant]
        public var pushToken: String?
        public var sequence: Int
    }

    /// Running activities, at most one per kind, oldest first.
    public private(set) var running: [Running] = []
    /// The number of activities ever started (names the next one).
    public private(set) var started = 0

    public init() {}

    public var isEmpty: Bool { running.isEmpty && started == 0 }

    /// Applies `event` at `now` and returns the commands it makes, in order.
    public mutating func handle(_ event: LiveActivityEvent, at now: Instant) -> [LiveActivityCommand] {
        running.removeAll { now - $0.startedAt >= LiveActivityLimits.maxActiveSeconds }
        switch event {
        case .workoutStarted(let workoutType):
            let attributes = LiveActivityAttributes.workout(
                WorkoutActivityAttributes(workoutType: String(workoutType.prefix(64)), startedAt: now))
            return start(attributes, state: .workout(.init(elapsedSeconds: 0)), at: now)
        case .workoutUpdated(let state):
            return update(.workout(state), at: now)
        case .workoutEnded(let state):
            return end(.workout, state: .workout(state), at: now)
        case .mealStarted(let attributes):
            return start(.meal(attributes), state: .meal(.init()), at: now)
        case .mealUpdated(let state):
            return update(.meal(state), at: now)
        case .mealEnded:
            guard let index = index(of: .meal) else { return [] }
            return end(.meal, state: running[index].lastSent.state, at: now)
        case .pushTokenReceived(let activityID, let token):
            if let index = running.firstIndex(where: { $0.id == activityID }) { running[index].pushToken = token }
            return []
        }
    }

    // MARK: - Rules

    private mutating func start(
        _ attributes: LiveActivityAttributes, state: LiveActivityContentState, at now: Instant
    ) -> [LiveActivityCommand] {
        guard
            LiveActivityLimits.payloadBytes(attributes: attributes, state: state) <= LiveActivityLimits.maxPayloadBytes
        else { return [] }
        var commands: [LiveActivityCommand] = []
        if let index = index(of: attributes.kind) {
            commands.append(command(index, .end, content: running[index].lastSent, dismissal: .immediate, at: now))
            running.remove(at: index)
        }
        started += 1
        let content = LiveActivityContent(state: state, staleDate: now + Self.staleAfterSeconds(attributes.kind))
        running.append(
            Running(
                id: "\(attributes.kind.rawValue)-\(started)", attributes: attributes, startedAt: now, lastSent: content,
                lastSentAt: now, highPriorityAt: [], pushToken: nil, sequence: 0))
        commands.append(command(running.count - 1, .start, content: content, dismissal: nil, at: now))
        return commands
    }

    private mutating func update(_ state: LiveActivityContentState, at now: Instant) -> [LiveActivityCommand] {
        guard let index = index(of: state.kind), fits(state, index) else { return [] }
        let activity = running[index]
        guard state != activity.lastSent.state else { return [] }
        let significant = Self.isSignificant(state, after: activity.lastSent.state)
        guard significant || now - activity.lastSentAt >= LiveActivityRules.minUpdateIntervalSeconds else { return [] }
        let content = LiveActivityContent(state: state, staleDate: now + Self.staleAfterSeconds(state.kind))
        return [command(index, .update, content: content, dismissal: nil, at: now, significant: significant)]
    }

    private mutating func end(
        _ kind: LiveActivityKind, state: LiveActivityContentState, at now: Instant
    ) -> [LiveActivityCommand] {
        guard let index = index(of: kind), fits(state, index) else { return [] }
        let dismissAfter =
            kind == .workout ? LiveActivityRules.workoutDismissAfterSeconds : LiveActivityRules.mealDismissAfterSeconds
        // An ended activity is not stale: its final figures stay true.
        let content = LiveActivityContent(state: state, staleDate: nil)
        let ending = command(index, .end, content: content, dismissal: .after(now + dismissAfter), at: now)
        running.remove(at: index)
        return [ending]
    }

    /// The command `event` of the activity at `index`, recorded as its last.
    private mutating func command(
        _ index: Int, _ event: LiveActivityCommand.Event, content: LiveActivityContent, dismissal: DismissalPolicy?,
        at now: Instant, significant: Bool = true
    ) -> LiveActivityCommand {
        var activity = running[index]
        activity.highPriorityAt.removeAll { now - $0 >= .secondsPerHour }
        let high = significant && activity.highPriorityAt.count < LiveActivityRules.highPriorityPerHour
        if high { activity.highPriorityAt.append(now) }
        activity.sequence += 1
        activity.lastSent = content
        activity.lastSentAt = now
        running[index] = activity
        return LiveActivityCommand(
            activityID: activity.id, event: event, attributes: activity.attributes, content: content,
            priority: high ? .high : .low, dismissal: dismissal, at: now, pushToken: activity.pushToken,
            sequence: activity.sequence)
    }

    private func index(of kind: LiveActivityKind) -> Int? { running.firstIndex { $0.attributes.kind == kind } }

    private func fits(_ state: LiveActivityContentState, _ index: Int) -> Bool {
        LiveActivityLimits.payloadBytes(attributes: running[index].attributes, state: state)
            <= LiveActivityLimits.maxPayloadBytes
    }

    static func staleAfterSeconds(_ kind: LiveActivityKind) -> Int64 {
        kind == .workout ? LiveActivityRules.workoutStaleAfterSeconds : LiveActivityRules.mealStaleAfterSeconds
    }

    /// A new exercise, or a newly logged item: worth the user's attention now.
    static func isSignificant(_ state: LiveActivityContentState, after previous: LiveActivityContentState) -> Bool {
        switch (state, previous) {
        case (.workout(let new), .workout(let old)): new.currentExercise != old.currentExercise
        case (.meal(let new), .meal(let old)): new.itemsLogged != old.itemsLogged
        default: true
        }
    }
}
