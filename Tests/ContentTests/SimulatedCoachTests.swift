import Models
import Testing

@testable import Content
@testable import SimulatedPlatform

@Suite("Simulated coach")
struct SimulatedCoachTests {
    let request = CoachRequest(
        kind: .morningGreeting, style: .encouraging, privacyLevel: .friendsOnly,
        facts: CopyContext(firstName: "Ana", weather: .rainy))
    let library: TemplateLibrary

    init() throws { library = try bundledEnglish() }

    func outcomes(_ behaviour: CoachBehaviour, seed: UInt64 = 2027, count: Int = 20_000) -> [CoachOutcome] {
        let coach = SimulatedCoach(behaviour: behaviour, library: library)
        var generator = SeededGenerator(seed: seed)
        return (0..<count).map { _ in coach.outcome(for: request, using: &generator) }
    }

    @Test func outcomesAreDeterministicForASeed() {
        let behaviour = CoachBehaviour()
        #expect(outcomes(behaviour, count: 500) == outcomes(behaviour, count: 500))
        #expect(outcomes(behaviour, seed: 1, count: 500) != outcomes(behaviour, seed: 2, count: 500))
    }

    @Test func everyCallDrawsFourValues() {
        let coach = SimulatedCoach(behaviour: CoachBehaviour(failureShare: 0.5), library: library)
        var generator = SeededGenerator(seed: 3)
        var reference = SeededGenerator(seed: 3)
        for _ in 0..<100 {
            _ = coach.outcome(for: request, using: &generator)
            for _ in 0..<4 { _ = reference.next() }
        }
        #expect(generator == reference)
    }

    @Test func theSharesMatchTheBehaviour() {
        let behaviour = CoachBehaviour(
            meanLatencyMillis: 600, slowShare: 0.05, failureShare: 0.04, malformedShare: 0.06)
        let all = outcomes(behaviour)
        let deciding = ContentGenerator(catalog: TemplateCatalog(default: library))
        var failed = 0
        var late = 0
        var malformed = 0
        var accepted = 0
        var inTimeLatencies: [Int] = []
        for outcome in all {
            var memory = TemplateMemory()
            var generator = SeededGenerator(seed: 1)
            let decision = deciding.decide(
                outcome,
                for: ContentRequest(
                    kind: .morningGreeting, style: .encouraging, recipient: ana, context: request.facts),
                memory: &memory, generator: &generator)
            switch decision.reason {
            case .coachError: failed += 1
            case .coachTimeout: late += 1
            case .malformedOutput: malformed += 1
            case .coachAccepted:
                accepted += 1
                inTimeLatencies.append(decision.coachLatencyMillis ?? -1)
            case .coachNotAsked, .heldByPhone: Issue.record("\(decision.reason)")
            }
        }
        let total = Double(all.count)
        #expect(abs(Double(failed) / total - 0.04) < 0.006)
        #expect(abs(Double(late) / total - 0.05) < 0.006)
        #expect(abs(Double(malformed) / total - 0.06) < 0.006)
        #expect(accepted + failed + late + malformed == all.count)
        #expect(inTimeLatencies.allSatisfy { (1..<2_000).contains($0) })
        let mean = Double(inTimeLatencies.reduce(0, +)) / Double(inTimeLatencies.count)
        #expect(mean > 450 && mean < 600, "mean \(mean)")
    }

    @Test func slowCallsAnswerAfterTheDeadline() {
        for outcome in outcomes(CoachBehaviour(slowShare: 1, failureShare: 0, malformedShare: 0), count: 500) {
            guard case .text(_, let millis) = outcome else {
                Issue.record("\(outcome)")
                continue
            }
            #expect(millis > 2_000)
        }
    }

    @Test(arguments: PrivacyLevel.allCases)
    func malformedAnswersFailValidationAtEveryLevel(level: PrivacyLevel) {
        for text in SimulatedCoach.malformed {
            let result = CoachOutput.validate(
                text, recipient: recipient(level),
                envelope: NotificationContent(kind: .morningGreeting, title: "", body: ""))
            #expect((try? result.get()) == nil, "\"\(text)\" passed at \(level)")
        }
    }

    @Test func malformedAnswersCoverSeveralProblems() {
        let codes = Set(
            SimulatedCoach.malformed.map {
                switch CoachOutput.validate(
                    $0, recipient: ana, envelope: NotificationContent(kind: .hydration, title: "", body: ""))
                {
                case .success: "passed"
                case .failure(let problem): problem.code
                }
            })
        #expect(codes.count >= 8, "\(codes)")
        #expect(!codes.contains("passed"))
    }

    @Test func aReliableCoachAlwaysAnswersWellInTime() {
        for outcome in outcomes(.reliable, count: 300) {
            guard case .text(let text, let millis) = outcome else {
                Issue.record("\(outcome)")
                continue
            }
            #expect(millis < 2_000)
            #expect((try? CoachOutput.parse(text).get()) != nil)
        }
    }

    @Test func behaviourValidation() {
        #expect(throws: InvalidValue.self) { try CoachBehaviour(slowShare: 1.5).validate() }
        #expect(throws: InvalidValue.self) {
            try CoachBehaviour(slowShare: 0.5, failureShare: 0.5, malformedShare: 0.1).validate()
        }
        #expect(throws: InvalidValue.self) { try CoachBehaviour(meanLatencyMillis: 0).validate() }
        #expect(throws: Never.self) { try CoachBehaviour().validate() }
    }

    @Test func asACoachEngineItIsDeterministicAndWaitsOutItsLatency() async throws {
        let waited = LatencyLog()
        let coach = SimulatedCoach(behaviour: .reliable, library: library, seed: 4, sleep: { await waited.add($0) })
        let first = try await coach.generate(request)
        let second = try await coach.generate(request)
        #expect(first == second)
        let log = await waited.durations
        #expect(log.count == 2 && log[0] == log[1] && log[0] > .zero)
    }

    @Test func asACoachEngineItThrowsItsFailures() async {
        let coach = SimulatedCoach(
            behaviour: CoachBehaviour(slowShare: 0, failureShare: 1, malformedShare: 0), library: library)
        await #expect(throws: CoachFailure.self) { try await coach.generate(request) }
    }
}

actor LatencyLog {
    var durations: [Duration] = []
    func add(_ duration: Duration) { durations.append(duration) }
}
