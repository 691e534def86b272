import Testing

@testable import Models

/// The byte-level reading and writing of request identifiers must agree with the plain ones.
@Suite("OccurrenceID text: the fast reading and writing agree with the plain ones")
struct OccurrenceIDTextTests {
    static func randomID(_ generator: inout SeededGenerator) -> OccurrenceID {
        let kind = NotificationKind.allCases.randomElement(using: &generator)!
        let day = Int64.random(in: -719_000...2_900_000, using: &generator)
        let snooze = Bool.random(using: &generator) ? 0 : Int.random(in: 1...255, using: &generator)
        let minute = Int.random(in: 0..<1_440, using: &generator)
        let slot: OccurrenceSlot =
            switch kind.slotMeaning {
            case .day: .day
            case .meal: .meal(MealType.allCases.randomElement(using: &generator)!)
            case .minuteOfDay: .minuteOfDay(minute)
            case .attempt: .attempt(Int.random(in: 0...0x7FFF, using: &generator))
            case .group: .group(Int.random(in: 0...0x7FFF, using: &generator))
            case .streakDays: .streakDays(Int.random(in: 0...0x7FFF, using: &generator))
            case .reminder:
                Bool.random(using: &generator)
                    ? .day : .reminder(number: Int.random(in: 1...31, using: &generator), minuteOfDay: minute)
            }
        if kind.slotMeaning == .minuteOfDay && Int.random(in: 0..<8, using: &generator) == 0 {
            return .dailySeries(kind, minute: minute)
        }
        return OccurrenceID(kind, daysSinceEpoch: day, slot, snooze: snooze)
    }

    /// Years 0000-9999 (the form's four digits); others are written the slow way.
    @Test func writingAgreesAndReadsBack() throws {
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<20_000 {
            let id = Self.randomID(&generator)
            #expect(id.description == id.slowDescription)
            #expect(try OccurrenceID(parsing: id.description) == id)
        }
        // The edges of four-digit years: 0000-01-01, 9999-12-31 (written fast), 10000-01-01 and
        // a year before 0 (written the slow way).
        for day: Int64 in [-719_528, 2_932_896, 2_932_897, -800_000] {
            let id = OccurrenceID(.hydration, daysSinceEpoch: day, .minuteOfDay(545), snooze: 3)
            #expect(id.description == id.slowDescription)
        }
        #expect(OccurrenceID(.morningGreeting, daysSinceEpoch: -719_528).description == "morningGreeting.0000-01-01")
        #expect(OccurrenceID(.morningGreeting, daysSinceEpoch: 2_932_896).description == "morningGreeting.9999-12-31")
        let farFuture = OccurrenceID(.morningGreeting, daysSinceEpoch: 3_000_000)
        #expect(farFuture.description == "morningGreeting.10183-09-21")
        #expect(farFuture.description == farFuture.slowDescription)
    }

    /// Mutations of valid identifiers (a byte changed, dropped or doubled, a part cut): the fast
    /// reading either gives up or reads what the slow one reads.
    @Test func mutationsAreReadAlikeOrLeftToTheSlowReading() {
        var generator = SeededGenerator(seed: 8)
        let alphabet = Array("0123456789.-rsnoozedailyZ+ é".utf8)
        var readFast = 0
        var readExactly = 0
        for _ in 0..<50_000 {
            var bytes = Array(Self.randomID(&generator).description.utf8)
            for _ in 0..<Int.random(in: 1...3, using: &generator) where !bytes.isEmpty {
                let at = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<4, using: &generator) {
                case 0: bytes[at] = alphabet.randomElement(using: &generator)!
                case 1: bytes.remove(at: at)
                case 2: bytes.insert(bytes[at], at: at)
                default: bytes.removeSubrange(at...)
                }
            }
            let text = String(decoding: bytes, as: UTF8.self)
            let slow = try? OccurrenceID(parsingSlowly: text)
            if let fast = OccurrenceID.canonical(text) {
                readFast += 1
                #expect(fast == slow, "\(text)")
            }
            // Read exactly only when the text is the identifier's own description.
            if let exact = OccurrenceID(exactly: text) {
                readExactly += 1
                #expect(exact.description == text)
            }
        }
        #expect(readFast > 1_000)
        #expect(readExactly > 1_000)
    }

    /// Every identifier the engine writes is read exactly; the old day form is not (it names the
    /// same occurrence with another text).
    @Test func exactlyReadsWhatDescriptionWritesAndNothingElse() {
        var generator = SeededGenerator(seed: 9)
        for _ in 0..<5_000 {
            let id = Self.randomID(&generator)
            guard (0...9_999).contains(id.isDailySeries ? 0 : id.date.year) else { continue }
            #expect(OccurrenceID(exactly: id.description) == id)
        }
        #expect(OccurrenceID(exactly: "morningGreeting.2027-03-01.0") == nil)
        #expect(OccurrenceID(exactly: "morningGreeting.2027-03-01") != nil)
        #expect(OccurrenceID(exactly: "liveActivity-42") == nil)
    }

    @Test(arguments: [
        "", ".", "hydration", "hydration.", "hydration.2027-03-01", "hydration.2027-02-29.0900",
        "hydration.2027-03-01.2400", "hydration.2027-03-01.0960", "hydration.daily.0900.snooze1",
        "mealReminder.2027-03-01.brunch", "checkInReminder.2027-03-01.r0-0900", "checkInReminder.2027-03-01.r32-0900",
        "checkInReminder.2027-03-01.r03-0900", "workoutKudos.2027-03-01.032768", "workoutKudos.2027-03-01.07",
        "morningGreeting.2027-03-01.snooze0", "morningGreeting.2027-03-01.snooze256", "morningGreeting.2027-03-01.x.y",
    ])
    func nonCanonicalFormsAreLeftToTheSlowReading(_ text: String) {
        #expect(OccurrenceID.canonical(text) == nil)
    }

    @Test func theOldDayFormIsStillRead() throws {
        #expect(
            try OccurrenceID(parsing: "morningGreeting.2027-03-01.0")
                == OccurrenceID(requestID: "morningGreeting.2027-03-01"))
    }
}
