import Models
import SimulatedPlatform
import Testing

@testable import Content

@Suite("ContentGenerator: AI or template, and why")
struct ContentGeneratorDecisionTests {
    let generator: ContentGenerator

    init() throws { generator = try bundledGenerator() }

    func decide(
        _ outcome: CoachOutcome?, _ request: ContentRequest = request(), seed: UInt64 = 7
    ) -> ContentDecision {
        var memory = TemplateMemory()
        var rng = SeededGenerator(seed: seed)
        return generator.decide(outcome, for: request, memory: &memory, generator: &rng)
    }

    @Test func validCopyInTimeIsShown() {
        let decision = decide(.text("Good morning, Ana ☀️|Sunny and rested: a great day for a run.", latencyMillis: 850))
        #expect(decision.source == .ai)
        #expect(decision.reason == .coachAccepted)
        #expect(decision.copy == Copy(title: "Good morning, Ana ☀️", body: "Sunny and rested: a great day for a run."))
        #expect(decision.templateName == nil)
        #expect(decision.coachLatencyMillis == 850)
        #expect(decision.contentMillis == 850)
        #expect(decision.imageKey == "morning_sunny")
    }

    static let failures: [(CoachOutcome, String)] = [
        (.timedOut, "coachTimeout"),
        (.text("Good morning ☀️|Ready?", latencyMillis: 2_001), "coachTimeout"),
        (.failed(reason: "quota exceeded", latencyMillis: 2_500), "coachTimeout"),
        (.failed(reason: "quota exceeded", latencyMillis: 120), "coachError"),
        (.text("We miss you at AirFit!", latencyMillis: 300), "malformedOutput.missingSeparator"),
        (.text("a|b|c", latencyMillis: 300), "malformedOutput.extraSeparators"),
        (.text("|We miss you", latencyMillis: 300), "malformedOutput.emptyTitle"),
        (.text("", latencyMillis: 300), "malformedOutput.empty"),
        (.text("Hi|" + String(repeating: "long ", count: 40), latencyMillis: 300), "malformedOutput.bodyTooLong"),
        (.text(String(repeating: "T", count: 61) + "|body", latencyMillis: 300), "malformedOutput.titleTooLong"),
        (.text("Hi {name} 👋|TODO", latencyMillis: 300), "malformedOutput.placeholder"),
        (.text("null|null", latencyMillis: 300), "malformedOutput.placeholder"),
        (.text("Good morning â˜€ï¸|Ready?", latencyMillis: 300), "malformedOutput.encodingGarbage"),
        (.text("Plan 📧|Sent to ana.lima@example.com", latencyMillis: 300), "malformedOutput.personalData.email"),
        (.text("Hi Ana Lima 👋|Ready?", latencyMillis: 300), "malformedOutput.personalData.fullName"),
    ]

    @Test(arguments: failures)
    func everyCoachFailureFallsBackToATemplateWithItsReason(outcome: CoachOutcome, code: String) {
        let decision = decide(outcome)
        #expect(decision.source == .template)
        #expect(decision.reason.code == code)
        #expect(decision.templateName != nil)
        #expect(!decision.copy.title.isEmpty && !decision.copy.body.isEmpty)
        #expect(decision.contentMillis <= generator.deadlineMillis)
    }

    @Test func healthFiguresFallBackForPrivateUsersOnly() {
        let text = "On fire 🔥|That's a 12-day streak, Ana."
        #expect(decide(.text(text, latencyMillis: 400), request(level: .friendsOnly)).source == .ai)
        let privately = decide(.text(text, latencyMillis: 400), request(level: .private))
        #expect(privately.source == .template)
        #expect(privately.reason.code.hasPrefix("malformedOutput.personalData."))
    }

    @Test func theTimeToContentIsCappedAtTheDeadline() {
        #expect(decide(.timedOut).contentMillis == 2_000)
        #expect(decide(.timedOut).coachLatencyMillis == nil)
        let late = decide(.text("Hi ☀️|Ready?", latencyMillis: 3_400))
        #expect(late.contentMillis == 2_000)
        #expect(late.coachLatencyMillis == 3_400)
        #expect(decide(nil).contentMillis == 0)
        #expect(decide(nil).reason == .coachNotAsked)
        #expect(decide(.failed(reason: "x", latencyMillis: 40)).contentMillis == 40)
    }

    @Test func theDeadlineIsInclusive() {
        #expect(decide(.text("Hi ☀️|Ready?", latencyMillis: 2_000)).source == .ai)
        #expect(decide(.text("Hi ☀️|Ready?", latencyMillis: 2_001)).source == .template)
    }

    @Test func errorReasonsAreKeptShort() {
        let decision = decide(.failed(reason: String(repeating: "e", count: 500), latencyMillis: 10))
        guard case .coachError(let reason) = decision.reason else {
            Issue.record("\(decision.reason)")
            return
        }
        #expect(reason.count == 120)
    }

    @Test func theCoachSeesOnlyWhatThePrivacyLevelAllows() {
        let full = richContext(.workoutComment, sender: stranger)
        let open = generator.coachRequest(for: request(.workoutComment, level: .public, context: full))
        #expect(open.facts == full)
        let friends = generator.coachRequest(for: request(.workoutComment, level: .friendsOnly, context: full))
        #expect(friends.facts.sender == nil)
        #expect(friends.facts.firstName == "Ana")
        let closed = generator.coachRequest(for: request(.workoutComment, level: .private, context: full))
        #expect(closed.facts.firstName == "")
        #expect(closed.facts.streakDays == nil && closed.facts.workoutsCompleted == nil && closed.facts.daysAway == nil)
        #expect(closed.facts.weather == .sunny)
        #expect(closed.privacyLevel == .private)
        #expect(closed.maxTitleCharacters == 60 && closed.maxBodyCharacters == 178)
    }

    @Test func templateDecisionsAreDeterministicForASeed() {
        let first = (0..<20).map { decide(.timedOut, request(.hydration), seed: UInt64($0)) }
        let second = (0..<20).map { decide(.timedOut, request(.hydration), seed: UInt64($0)) }
        #expect(first == second)
        #expect(Set(first.map(\.copy)).count > 1, "the seed should matter")
    }

    @Test func acceptedCoachCopyCountsForVariety() {
        var memory = TemplateMemory()
        var rng = SeededGenerator(seed: 1)
        let coachCopy = "Water break 💧|A glass now keeps the slump away."
        let ai = generator.decide(
            .text(coachCopy, latencyMillis: 100), for: request(.hydration), memory: &memory, generator: &rng)
        #expect(ai.source == .ai)
        #expect(memory.lastBody(of: .hydration, is: "A glass now keeps the slump away."))
        for _ in 0..<50 {
            var copy = memory
            let next = generator.decide(nil, for: request(.hydration), memory: &copy, generator: &rng)
            #expect(next.copy.body != "A glass now keeps the slump away.")
        }
    }

    @Test func theLanguagePicksTheTemplates() throws {
        let catalog = try TemplateCatalog.bundled()
        let german = ContentGenerator(catalog: catalog)
        var memory = TemplateMemory()
        var rng = SeededGenerator(seed: 3)
        let decision = german.decide(
            .timedOut, for: request(.mealReminder, language: "de-AT"), memory: &memory, generator: &rng)
        #expect(decision.copy.title.contains("Mittagessen") || decision.copy.body.contains("Mittagessen"))
    }

    @Test func soundsFollowTheKind() {
        #expect(decide(nil, request(.achievement)).sound == .achievement)
        #expect(decide(nil, request(.securityAlert)).sound == .urgent)
        #expect(decide(nil, request(.mealReminder)).sound == .reminder)
    }
}

@Suite("ContentGenerator: calling a coach under the deadline")
struct ContentGeneratorAsyncTests {
    let generator: ContentGenerator

    init() throws { generator = try bundledGenerator() }

    func generate(_ coach: some CoachEngine, clock: any Clock<Duration>) async -> ContentDecision {
        var memory = TemplateMemory()
        var rng = SeededGenerator(seed: 11)
        return await generator.generate(request(), coach: coach, clock: clock, memory: &memory, generator: &rng)
    }

    @Test func aCoachThatAnswersInTimeIsUsed() async {
        let decision = await generate(FixedCoach(text: "Morning, Ana 🌞|Sun is out: run early."), clock: StoppedClock())
        #expect(decision.source == .ai)
        #expect(decision.copy.body == "Sun is out: run early.")
    }

    @Test func aCoachThatNeverAnswersTimesOutAtTheDeadline() async {
        let decision = await generate(HangingCoach(), clock: ExpiredClock())
        #expect(decision.source == .template)
        #expect(decision.reason == .coachTimeout)
        #expect(decision.contentMillis == 2_000)
    }

    @Test func aCoachThatThrowsIsAnError() async {
        let decision = await generate(ThrowingCoach(), clock: StoppedClock())
        #expect(decision.reason == .coachError("quota exceeded"))
        #expect(decision.source == .template)
    }

    @Test func garbageFromALiveCoachIsNeverShown() async {
        let decision = await generate(FixedCoach(text: "undefined"), clock: StoppedClock())
        #expect(decision.source == .template)
        #expect(decision.reason.code == "malformedOutput.missingSeparator")
    }

    @Test func theCoachIsAskedWithRedactedFacts() async {
        let coach = RecordingCoach()
        var memory = TemplateMemory()
        var rng = SeededGenerator(seed: 11)
        _ = await generator.generate(
            request(level: .private), coach: coach, clock: StoppedClock(), memory: &memory, generator: &rng)
        #expect(coach.request?.facts.firstName == "")
        #expect(coach.request?.facts.sleepQuality == nil)
    }

    @Test func theSimulatedCoachWorksAsACoachEngine() async {
        let coach = SimulatedCoach(behaviour: .reliable, library: generator.catalog.defaultLibrary, seed: 5)
        let decision = await generate(coach, clock: StoppedClock())
        #expect(decision.source == .ai)
        #expect(decision.reason == .coachAccepted)
    }

    @Test func aRealClockTimesOutASlowCoach() async {
        // A 20 ms deadline on the continuous clock against a coach that never answers.
        let outcome = await ContentGenerator.outcome(
            of: HangingCoach(), for: generator.coachRequest(for: request()), deadline: .milliseconds(20),
            clock: ContinuousClock())
        #expect(outcome == .timedOut)
    }
}

@Suite("ContentGenerator: judging a late-arriving answer")
struct ContentGeneratorJudgeTests {
    let generator: ContentGenerator

    init() throws { generator = try bundledGenerator() }

    @Test func anAcceptedAnswerIsReturnedWithItsLatency() {
        let verdict = generator.judge(
            .text("Morning, Ana 🌞|Sun is out: run early.", latencyMillis: 900), for: request())
        #expect(verdict == .accepted(Copy(title: "Morning, Ana 🌞", body: "Sun is out: run early."), latencyMillis: 900))
    }

    @Test(arguments: ContentGeneratorDecisionTests.failures)
    func rejectionsCarryTheSameReasonAsDecide(outcome: CoachOutcome, code: String) {
        guard case .rejected(let reason, _) = generator.judge(outcome, for: request()) else {
            Issue.record("accepted \(outcome)")
            return
        }
        #expect(reason.code == code)
    }
}
