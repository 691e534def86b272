import Models
import Scheduling
import Testing

@testable import Simulation

/// The checkers' compact history: keys, firings and the trim.
@Suite("Request keys and the firing map")
struct RequestKeyTests {
    @Test func engineIdentifiersAreOccurrencesAndAnythingElseIsText() {
        #expect(RequestKey("mealReminder.2027-06-01.lunch").occurrence != nil)
        #expect(RequestKey("hydration.daily.0900").occurrence != nil)
        #expect(RequestKey("promo-summer").occurrence == nil)
        #expect(RequestKey("weeklyReview.2027-06-04.0").occurrence == nil)
        for text in [
            "mealReminder.2027-06-01.lunch", "hydration.daily.0900", "promo-summer", "weeklyReview.2027-06-04.0",
        ] {
            #expect(RequestKey(text).description == text)
        }
    }

    @Test func aOneOffAndEachFiringOfARepeatingRequestAreDifferentEntries() {
        var map = FiringMap<Int64>()
        let series = "hydration.daily.0900"
        map[FiringKey(series, repeatsAt: nil)] = 1
        map[FiringKey(series, repeatsAt: 100)] = 2
        map[FiringKey(series, repeatsAt: 200)] = 3
        map[FiringKey("promo-summer", repeatsAt: nil)] = 4
        map[FiringKey("promo-summer", repeatsAt: 100)] = 5
        #expect(map.count == 5)
        #expect(map[FiringKey(series, repeatsAt: 100)] == 2)
        #expect(map[FiringKey("promo-summer", repeatsAt: 100)] == 5)
        #expect(map.updateValue(6, forKey: FiringKey(series, repeatsAt: nil)) == 1)
        #expect(map.removeValue(forKey: FiringKey("promo-summer", repeatsAt: nil)) == 4)
        #expect(map[FiringKey("promo-summer", repeatsAt: nil)] == nil)
        #expect(map.count == 4)
    }

    /// The sorted table answers as a dictionary would, over random sets, replacements, removals
    /// and trims of occurrence keys (one-off and repeating) and text keys.
    @Test func theFiringMapAnswersAsADictionaryWould() {
        var random = SeededGenerator(seed: 12)
        var map = FiringMap<Int64>()
        var model: [FiringKey: Int64] = [:]
        let texts = (0..<40).map { index -> String in
            let day = 1 + index % 28
            return index % 5 == 4 ? "promo-\(index)" : "mealReminder.2027-06-\(day < 10 ? "0" : "")\(day).lunch"
        }
        for step in 0..<20_000 {
            let text = texts[Int(random.next() % UInt64(texts.count))]
            let firedAt: Int64? = random.next() % 3 == 0 ? Int64(random.next() % 4) * 100 : nil
            let key = FiringKey(text, repeatsAt: firedAt)
            switch random.next() % 10 {
            case 0..<5:
                let value = Int64(step)
                #expect(map.updateValue(value, forKey: key) == model.updateValue(value, forKey: key))
            case 5..<7:
                #expect(map.removeValue(forKey: key) == model.removeValue(forKey: key))
            case 7:
                let cutoff = Int64(step) - 500
                map.keep { $0 >= cutoff }
                model = model.filter { $0.value >= cutoff }
            default:
                #expect(map[key] == model[key])
            }
            #expect(map.count == model.count)
        }
        for (key, value) in model { #expect(map[key] == value) }
    }

    @Test func keepDropsWhatFailsOnBothKindsOfKey() {
        var map = FiringMap<Int64>()
        map[FiringKey("mealReminder.2027-06-01.lunch", repeatsAt: nil)] = 10
        map[FiringKey("mealReminder.2027-06-09.lunch", repeatsAt: nil)] = 90
        map[FiringKey("promo-old", repeatsAt: nil)] = 10
        map[FiringKey("promo-new", repeatsAt: nil)] = 90
        map.keep { $0 >= 50 }
        #expect(map.count == 2)
        #expect(map[FiringKey("mealReminder.2027-06-09.lunch", repeatsAt: nil)] == 90)
        #expect(map[FiringKey("promo-new", repeatsAt: nil)] == 90)
        #expect(map[FiringKey("promo-old", repeatsAt: nil)] == nil)
    }

    /// A daily series shown on two days is two showings; the same showing on two channels is caught.
    @Test func theChannelCheckerTellsFiringsOfARepeatingRequestApart() {
        var checker = ChannelChecker()
        let at = Instant(secondsSinceEpoch: 1_800_000_000)
        let series = "hydration.daily.0900"
        #expect(checker.observeShown(FiringKey(series, repeatsAt: at.secondsSinceEpoch), on: .local, at: at).isEmpty)
        let nextDay = at + 86_400
        #expect(
            checker.observeShown(FiringKey(series, repeatsAt: nextDay.secondsSinceEpoch), on: .remote, at: nextDay)
                .isEmpty)
        #expect(
            checker.observeShown(FiringKey(series, repeatsAt: nextDay.secondsSinceEpoch), on: .local, at: nextDay)
                == [.noOccurrenceOnTwoChannels])
    }

    /// A line longer than the builder's buffer grows it and keeps every byte; strings with
    /// quotes, backslashes and control characters are escaped, others copied as they are.
    @Test func aLineGrowsPastItsBufferAndEscapesWhatJSONNeeds() {
        var line = LineBuilder(capacity: 64)
        var expected = ""
        for index in 0..<200 {
            line.id("k", "v\(index)")
            expected += #","k":"v\#(index)""#
        }
        line.field("detail", "say \"hi\" \\ tab\tbell\u{07} é 💧")
        expected += #","detail":"say \"hi\" \\ tab\u0009bell\u0007 é 💧""#
        line.field("empty", "")
        expected += #","empty":"""#
        #expect(String(decoding: line.bytes, as: UTF8.self) == expected)
        #expect(line.count == expected.utf8.count)
        line.removeAll()
        line.raw("{}")
        #expect(line.bytes == Array("{}".utf8))
    }

    /// A builder keeps the last two dates it wrote: timestamps of six days in random order through
    /// one builder read as a fresh builder (which keeps none) writes each, offsets included.
    @Test func keptDatesAreTheDatesAsked() {
        var generator = SeededGenerator(seed: 8)
        var line = LineBuilder()
        // Either side of the epoch, neighbouring days, and 9999-12-31.
        let days: [Int64] = [20_000, 20_001, 19_999, -1, 0, 2_932_896]
        for _ in 0..<3_000 {
            let day = days[Int(generator.next() % UInt64(days.count))]
            let local = LocalDateTime(localSeconds: day * 86_400 + Int64(generator.next() % 86_400))
            let offset = [0, -18_000, 20_700][Int(generator.next() % 3)]
            line.removeAll()
            line.timestampValue(local, offsetSeconds: offset)
            var fresh = LineBuilder()
            fresh.timestampValue(local, offsetSeconds: offset)
            #expect(line.bytes == fresh.bytes, "\(local) \(offset)")
        }
    }

    /// The event log's timestamps, byte for byte: offsets either side of UTC, 30 and 45 minutes,
    /// and a year written in its four lowest digits.
    @Test func timestampsAreWrittenAsBefore() {
        func written(_ date: LocalDate, _ secondOfDay: Int, offsetSeconds: Int) -> String {
            var line = LineBuilder()
            line.timestampValue(LocalDateTime(date: date, secondOfDay: secondOfDay), offsetSeconds: offsetSeconds)
            return String(decoding: line.bytes, as: UTF8.self)
        }
        let piDay = LocalDate(year: 2027, month: 3, day: 14)
        let time = 2 * 3_600 + 30 * 60 + 5
        #expect(written(piDay, time, offsetSeconds: 0) == #""2027-03-14T02:30:05Z""#)
        #expect(written(piDay, time, offsetSeconds: -18_000) == #""2027-03-14T02:30:05-05:00""#)
        #expect(written(piDay, time, offsetSeconds: 20_700) == #""2027-03-14T02:30:05+05:45""#)
        #expect(written(piDay, time, offsetSeconds: -12_600) == #""2027-03-14T02:30:05-03:30""#)
        #expect(
            written(LocalDate(year: 7, month: 1, day: 2), 3 * 3_600 + 4 * 60 + 5, offsetSeconds: 50_400)
                == #""0007-01-02T03:04:05+14:00""#)
        let farFuture = LocalDateTime(date: LocalDate(year: 12_345, month: 6, day: 7), secondOfDay: 3_723)
        var line = LineBuilder()
        line.timestampValue(farFuture, offsetSeconds: 0)
        #expect(String(decoding: line.bytes, as: UTF8.self) == #""2345-06-07T01:02:03Z""#)
    }

    /// A trace entry's detail is written into the line piece by piece: the same bytes as the
    /// detail's text written as a JSON string, quotes, backslashes and control characters escaped.
    @Test func aDetailIsWrittenAsItsTextWouldBe() {
        let at = Instant(iso8601: "2027-06-01T12:00:00Z")!
        let id = OccurrenceID(.hydration, date: LocalDate(year: 2027, month: 6, day: 1), .minuteOfDay(9 * 60))
        let details: [(TraceDetail, TraceDetail)] = [
            (.unknownAction("say \"hi\"\\\n\u{7}"), .none),
            (.rule(.capPerHour, dropped: false, limits: RuleLimits(NotificationPreferences())), .snoozedCopy(of: id)),
            (.none, .zoneChanged(zone: "Asia/Kathmandu", passedAt: LocalTimeOfDay("08:00"))),
            (.duplicateEvent("évènement \"7\""), .none),
        ]
        for (why, movedBefore) in details {
            let entry = TraceEntry(
                at: at, userID: "u1", subject: .occurrence(id), kind: .hydration, decision: .deferred,
                reason: .capPerHour, why: why, movedBefore: movedBefore)
            var line = LineBuilder()
            line.detail(of: entry)
            var expected = Array(#","detail":"#.utf8)
            JSONString.append(entry.detail, style: .hexControls, to: &expected)
            #expect(line.bytes == expected, "\(entry.detail)")
            #expect(!entry.detailIsEmpty)
        }
    }

    /// An identifier that came from outside as text is escaped in the line; an occurrence's is
    /// written as it is (it holds nothing to escape).
    @Test func anExternalIdentifierIsEscaped() {
        var external = LineBuilder()
        external.id("id", TraceSubject.external("s\"1\\\n"))
        #expect(external.bytes == Array(#","id":"s\"1\\\u000a""#.utf8))
        let id = OccurrenceID(.hydration, date: LocalDate(year: 2027, month: 6, day: 1), .minuteOfDay(9 * 60))
        var occurrence = LineBuilder()
        occurrence.id("id", TraceSubject.occurrence(id))
        #expect(occurrence.bytes == Array(",\"id\":\"\(id.description)\"".utf8))
    }
}
