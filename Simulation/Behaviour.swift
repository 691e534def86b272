import Content
import Delivery
import Engagement
import Models

/// Whether a user is around to see a notification.
enum Absence: Equatable {
    case present
    /// In a lapse that ends on its own at a set time.
    case lapsed
    /// Gone for good, unless a nudge brings them back.
    case churned
}

/// What a person perceives of a delivered notification: what it is about, which occurrence it
/// is (for a nudge, which attempt), how relevant it is and which actions it offers. Never its
/// words: a simulated person must react to what the engine decided, not to a template's copy.
struct PerceivedNotification: Equatable {
    var requestID: RequestID
    var kind: NotificationKind
    /// Parsed from the request identifier; nil for identifiers that name no single occurrence
    /// (a batch of social items).
    var occurrence: OccurrenceID?
    var relevance: Double
    var category: NotificationCategoryID

    init(
        requestID: RequestID, kind: NotificationKind, occurrence: OccurrenceID?, relevance: Double,
        category: NotificationCategoryID
    ) {
        self.requestID = requestID
        self.kind = kind
        self.occurrence = occurrence
        self.relevance = relevance
        self.category = category
    }

    init(_ notification: DeliveredNotification) {
        let content = notification.request.content
        self.init(
            requestID: notification.request.identifier, kind: content.kind,
            occurrence: OccurrenceID(requestID: notification.request.identifier), relevance: content.relevanceScore,
            category: content.category)
    }
}

/// The tone of a re-engagement nudge as its recipient reads it.
enum NudgeTone: Equatable {
    case light
    /// "It's been 9 days. Want to talk it through?": more likely to bring a lapsed user back.
    case stronger
}

/// How a user reacts to a notification.
struct Reaction: Equatable {
    /// The notification ends the user's lapse (only a re-engagement nudge can).
    var returns: Bool
    /// What the user does with it, and how long after the delivery.
    var action: NotificationActionID
    var delaySeconds: Int64
}

/// What a persona does: the draws of a user's day, their reactions to notifications and their
/// trips. Pure functions of the user's habits and settings, the notification as perceived, the
/// time and the user's seeded generator; the world applies the results.
enum Behaviour {
    /// The tone the engine gives a nudge: stronger for check_in_on_me users from
    /// `strongerFromDay` days after the last activity, which is fixed by the attempt number
    /// (the occurrence's slot) and the campaign's attempt days; the nudge fires no earlier than
    /// its day. The stronger copy names the days away, a health figure a private user's
    /// notifications never carry, so private users get (and read) the light copy.
    static func tone(
        of occurrence: OccurrenceID?, for profile: UserProfile, configuration: EngineConfiguration
    ) -> NudgeTone {
        guard let occurrence, occurrence.kind == .reEngagement,
            profile.communication.absenceResponse == .checkInOnMe,
            PrivacyPolicy(profile.privacyLevel).showsHealthFigures
        else { return .light }
        guard case .attempt(let attempt) = occurrence.slot else { return .light }
        let days = configuration.checkInOnMeAttemptDays
        guard days.indices.contains(attempt - 1) else { return .light }
        return days[attempt - 1] >= configuration.strongerFromDay ? .stronger : .light
    }

    /// The persona's reaction: act, snooze, dismiss or ignore (nil), by local hour and relevance.
    /// An absent user reacts only to a nudge, which may end the absence. `openFactor` is
    /// fatigue's multiplier on the chance to open or act (`FatigueModel.openFactor`; 1 rested).
    static func reaction(
        to notification: PerceivedNotification, absence: Absence, habits: Habits, localMinute: Int,
        tone: NudgeTone, openFactor: Double = 1, generator: inout SeededGenerator
    ) -> Reaction? {
        var returns = false
        if absence != .present {
            guard notification.kind == .reEngagement, absence == .lapsed || generator.chance(0.05) else { return nil }
            guard generator.chance(tone == .stronger ? 0.3 : 0.2) else { return nil }
            returns = true
        } else if !habits.isAwake(minuteOfDay: localMinute) {
            return nil
        }
        let category = NotificationCategory.all.first { $0.id == notification.category }
        let roll = generator.nextUnit()
        let actProbability = min(0.95, habits.actRate * (0.5 + notification.relevance)) * openFactor
        let action: NotificationActionID
        if notification.kind == .reEngagement || roll < actProbability {
            action = category?.actions.first(where: { $0.options.contains(.foreground) })?.id ?? .defaultTap
        } else if roll < actProbability + 0.08, let snooze = category?.actions.first(where: { $0.id.isSnooze }) {
            action = snooze.id
        } else if roll < actProbability + 0.2, category?.reportsDismissal == true {
            action = .dismiss
        } else {
            return nil
        }
        let delay = Int64(generator.exponential(mean: 420)) + 5
        return Reaction(returns: returns, action: action, delaySeconds: delay)
    }

    /// What a day holds for a present user.
    enum DayPlan {
        /// A lapse begins: `days` long, or for good when `churns`.
        case lapse(days: Double, churns: Bool)
        /// The day was drawn already (travel moved midnight).
        case alreadyDrawn
        /// The day's events, in the order they are to be scheduled.
        case day(LocalDate, [(time: Int64, kind: EventKind)])
    }

    /// Draws the user's day: app opens, meals, a workout, other users' reactions, a permission
    /// change; or starts a lapse.
    static func planDay(
        _ traits: SimulatedUserTraits, zone: ZoneRules, at now: Instant, scenario: Scenario,
        lastPlannedDate: LocalDate?, socialSequence: inout Int, generator: inout SeededGenerator
    ) -> DayPlan {
        let habits = traits.persona.habits
        var lapseChance = habits.lapsePerDay
        if traits.persona == .churner && now - scenario.startInstant > 14 * .secondsPerDay { lapseChance *= 3 }
        if generator.chance(lapseChance) {
            let days = max(4.0, generator.exponential(mean: 8))
            return .lapse(days: days, churns: !generator.chance(habits.returnRate))
        }
        let date = zone.localDate(at: now + 60)
        if let last = lastPlannedDate, date <= last { return .alreadyDrawn }
        /// The instant of a local minute of the day; never in the past (the day may start late after travel).
        func at(_ minute: Int) -> Int64 {
            let wrapped = ((minute % 1_440) + 1_440) % 1_440
            let instant = zone.instant(for: LocalDateTime(date: date, secondOfDay: wrapped * 60)).secondsSinceEpoch
            return max(instant, now.secondsSinceEpoch)
        }
        var events: [(time: Int64, kind: EventKind)] = []
        let awakeMinutes = habits.wake < habits.sleep ? habits.sleep - habits.wake : habits.sleep + 1_440 - habits.wake
        let opens =
            Int(habits.opensPerDay) + (generator.chance(habits.opensPerDay.truncatingRemainder(dividingBy: 1)) ? 1 : 0)
        for _ in 0..<opens {
            let minute = habits.wake + generator.int(in: 0...max(0, awakeMinutes - 1))
            let session = Int(generator.exponential(mean: 240)) + 10
            events.append((at(minute), .activity(.appOpened(sessionSeconds: session))))
        }
        for meal in MealType.allCases where generator.chance(habits.mealLogging) {
            let minute = meal.defaultTime.minutesSinceMidnight + generator.int(in: -45...75)
            events.append((at(minute), .activity(.mealLogged(meal))))
        }
        if habits.workoutDays.contains(date.weekday), generator.chance(habits.adherence) {
            let minute = habits.workoutMinute + generator.int(in: -20...30) + 45
            events.append((at(minute), .activity(.workoutCompleted(durationMinutes: 45))))
        }
        // Other users' reactions, at any hour (they live in other zones).
        for (kind, perDay) in [
            (NotificationKind.workoutKudos, habits.socialPerDay), (.workoutComment, habits.socialPerDay / 4),
            (.newFollower, 0.1), (.mention, 0.05),
        ] {
            var count = Int(perDay)
            if generator.chance(perDay - Double(count)) { count += 1 }
            for _ in 0..<count {
                socialSequence += 1
                let topics = ["morning run", "evening lift", "yoga flow"]
                let event = SocialEvent(
                    id: "\(traits.profile.id)-s\(socialSequence)", kind: kind,
                    actorName: Population.firstNames[generator.int(in: 0...Population.firstNames.count - 1)]
                        + " Friend",
                    topic: topics[generator.int(in: 0...topics.count - 1)], isMutualFriend: generator.chance(0.5))
                events.append((at(generator.int(in: 0...1_439)), .social(event)))
            }
        }
        if generator.chance(scenario.faults.permissionRevokedPerUserWeek / 7) {
            events.append((at(generator.int(in: 0...1_439)), .permission(granted: false)))
        }
        return .day(date, events)
    }

    /// Where a traveller goes next: another of the scenario's zones, or nil when the draws keep
    /// landing on the current one.
    static func destination(from current: String, among zones: Weights, generator: inout SeededGenerator) -> String? {
        var next = zones.pick(&generator)
        for _ in 0..<4 where next == current { next = zones.pick(&generator) }
        return next == current ? nil : next
    }

    /// Seconds until a traveller's next trip.
    static func secondsUntilNextTrip(ratePerDay: Double, generator: inout SeededGenerator) -> Int64 {
        let days = generator.exponential(mean: 1 / max(ratePerDay, 1e-6))
        return Int64(days * 86_400) + 1
    }
}

extension NotificationActionID {
    var isSnooze: Bool { self == .snooze30 || self == .snoozeReminder || self == .snooze }
}
