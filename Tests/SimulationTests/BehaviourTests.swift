import Delivery
import Engagement
import Models
import Testing

@testable import Simulation

/// The behaviour model decides from what a person perceives (kind, occurrence, relevance,
/// category) and their own settings, never from the words of a notification.
@Suite struct BehaviourTests {
    let configuration = EngineConfiguration()

    func profile(_ absence: AbsenceResponse, _ privacy: PrivacyLevel) -> UserProfile {
        UserProfile(
            id: "u1", displayName: "Ana Example", timeZone: "UTC",
            communication: CommunicationPreferences(absenceResponse: absence), privacyLevel: privacy)
    }

    func nudge(attempt: Int) -> OccurrenceID? { OccurrenceID(requestID: "reEngagement.2027-03-01.\(attempt)") }

    func perceived(_ kind: NotificationKind, id: RequestID, relevance: Double = 0.5) -> PerceivedNotification {
        PerceivedNotification(
            requestID: id, kind: kind, occurrence: OccurrenceID(requestID: id), relevance: relevance,
            category: kind.category)
    }

    /// With the default attempt days [3, 7, 14] and `strongerFromDay` 7, the engine writes the
    /// stronger copy for check_in_on_me users from the second attempt on, naming the days away,
    /// which private users' copy never does.
    @Test(arguments: [
        (AbsenceResponse.checkInOnMe, PrivacyLevel.public, 1, NudgeTone.light),
        (.checkInOnMe, .public, 2, .stronger),
        (.checkInOnMe, .public, 3, .stronger),
        (.checkInOnMe, .friendsOnly, 2, .stronger),
        (.checkInOnMe, .private, 2, .light),
        (.checkInOnMe, .private, 3, .light),
        (.checkInOnMe, .public, 4, .light),
        (.lightNudge, .public, 1, .light),
        (.lightNudge, .public, 2, .light),
        (.giveMeSpace, .public, 1, .light),
    ])
    func theToneOfANudgeFollowsItsAttemptAndTheUsersSettings(
        absence: AbsenceResponse, privacy: PrivacyLevel, attempt: Int, expected: NudgeTone
    ) {
        let tone = Behaviour.tone(
            of: nudge(attempt: attempt), for: profile(absence, privacy), configuration: configuration)
        #expect(tone == expected)
    }

    @Test func theStrongerToneFollowsTheConfiguredDays() {
        var later = configuration
        later.strongerFromDay = 14
        let user = profile(.checkInOnMe, .public)
        #expect(Behaviour.tone(of: nudge(attempt: 2), for: user, configuration: later) == .light)
        #expect(Behaviour.tone(of: nudge(attempt: 3), for: user, configuration: later) == .stronger)
    }

    @Test func onlyANudgeHasATone() {
        let user = profile(.checkInOnMe, .public)
        // A workout reminder's slot is a minute of the day, never an attempt.
        let reminder = OccurrenceID(requestID: "workoutReminder.2027-03-01.0730")
        #expect(reminder != nil)
        #expect(Behaviour.tone(of: reminder, for: user, configuration: configuration) == .light)
        #expect(Behaviour.tone(of: nil, for: user, configuration: configuration) == .light)
    }

    @Test func whatIsPerceivedDoesNotDependOnTheCopy() {
        func delivered(title: String, body: String) -> DeliveredNotification {
            let at = Instant(secondsSinceEpoch: 1_803_859_200)
            return DeliveredNotification(
                request: NotificationRequest(
                    identifier: "reEngagement.2027-03-01.2",
                    content: NotificationContent(kind: .reEngagement, title: title, body: body, relevanceScore: 0.7),
                    trigger: .date(at)),
                deliveredAt: at, presentation: .banner)
        }
        let named = PerceivedNotification(delivered(title: "We miss you", body: "It's been 9 days."))
        let generic = PerceivedNotification(delivered(title: "Hello", body: "It's been a while."))
        #expect(named == generic)
        #expect(named.occurrence?.slot == .attempt(2))
        #expect(named.kind == .reEngagement)
        #expect(named.relevance == 0.7)
    }

    @Test func anAbsentUserIgnoresAllButNudgesWithoutDrawing() {
        for absence in [Absence.lapsed, .churned] {
            var generator = SeededGenerator(seed: 1)
            let before = generator
            let reaction = Behaviour.reaction(
                to: perceived(.mealReminder, id: "mealReminder.2027-03-01.lunch"), absence: absence,
                habits: Persona.morningRunner.habits, localMinute: 12 * 60, tone: .stronger, generator: &generator)
            #expect(reaction == nil)
            #expect(generator.state == before.state)
        }
    }

    @Test func aSleepingUserDoesNotReact() {
        let habits = Persona.morningRunner.habits  // awake 06:00-22:00
        for seed in 0..<200 {
            var generator = SeededGenerator(seed: UInt64(seed))
            let reaction = Behaviour.reaction(
                to: perceived(.workoutReminder, id: "workoutReminder.2027-03-01.0300", relevance: 1), absence: .present,
                habits: habits, localMinute: 3 * 60, tone: .light, generator: &generator)
            #expect(reaction == nil)
        }
    }

    /// Lapsed users come back on about 20% of light nudges and 30% of stronger ones; churned
    /// users only rarely (5% of that).
    @Test func aStrongerNudgeBringsMoreLapsedUsersBack() {
        func returns(_ absence: Absence, _ tone: NudgeTone, trials: Int = 4_000) -> Double {
            var count = 0
            for seed in 0..<trials {
                var generator = SeededGenerator(seed: UInt64(seed)).derived(77)
                let reaction = Behaviour.reaction(
                    to: perceived(.reEngagement, id: "reEngagement.2027-03-01.2"), absence: absence,
                    habits: Persona.lapsing.habits, localMinute: 3 * 60, tone: tone, generator: &generator)
                if let reaction {
                    #expect(reaction.returns)
                    #expect(reaction.action == .defaultTap)
                    #expect(reaction.delaySeconds >= 5)
                    count += 1
                }
            }
            return Double(count) / Double(trials)
        }
        let light = returns(.lapsed, .light)
        let stronger = returns(.lapsed, .stronger)
        #expect(abs(light - 0.2) < 0.03)
        #expect(abs(stronger - 0.3) < 0.03)
        #expect(returns(.churned, .stronger) < 0.03)
    }

    @Test func aPresentUserActsMoreOnRelevantNotifications() {
        func actions(relevance: Double) -> Int {
            (0..<2_000).filter { seed in
                var generator = SeededGenerator(seed: UInt64(seed))
                let reaction = Behaviour.reaction(
                    to: perceived(.workoutReminder, id: "workoutReminder.2027-03-01.0730", relevance: relevance),
                    absence: .present, habits: Persona.morningRunner.habits, localMinute: 7 * 60 + 30, tone: .light,
                    generator: &generator)
                return reaction.map { !$0.returns && $0.action != .dismiss && !$0.action.isSnooze } ?? false
            }.count
        }
        #expect(actions(relevance: 1) > actions(relevance: 0))
    }
}

/// The habits kept for each persona are the ones it defines, each persona its own.
@Suite struct PersonaHabitsTests {
    @Test(arguments: Persona.allCases)
    func theKeptHabitsAreTheDefinedOnes(persona: Persona) {
        #expect(persona.habits == persona.definedHabits)
    }

    @Test func noTwoPersonasShareHabits() {
        #expect(Set(Persona.allCases.map(\.habits)).count == Persona.allCases.count)
    }
}
