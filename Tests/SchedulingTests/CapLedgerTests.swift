import Models
import Testing

@testable import Scheduling

/// The reference instant of these tests; every other time is a whole number of minutes from it.
private let t0 = Instant(iso8601: "2027-03-01T09:00:00Z")!

/// `t0` shifted by `minutes` (negative for earlier).
private func at(_ minutes: Int64) -> Instant { t0 + minutes * .secondsPerMinute }

private func ledger(_ minutes: [Int64]) -> CapLedger { CapLedger(minutes.map(at)) }

// MARK: - An independent statement of the rule

/// The rule in its rolling-window form: every window `(x - 3600, x]` holds at most `cap` entries.
/// Only windows that contain `inserted` are checked, so a ledger that already breaks the rule
/// elsewhere does not count against the new entry.
private func fitsHourlyCap(_ entries: [Int64], inserted: Int64, cap: Int) -> Bool {
    let all = entries + [inserted]
    // The fullest window containing `inserted` ends at `inserted` or at an entry within the hour after it.
    let ends = [inserted] + entries.filter { $0 >= inserted && $0 < inserted + .secondsPerHour }
    return ends.allSatisfy { end in all.count { $0 > end - .secondsPerHour && $0 <= end } <= cap }
}

/// The rule over the whole ledger: any `cap + 1` consecutive entries span at least an hour.
private func wholeLedgerFitsHourlyCap(_ entries: [Int64], cap: Int) -> Bool {
    let sorted = entries.sorted()
    guard sorted.count > cap else { return true }
    return (0..<(sorted.count - cap)).allSatisfy { sorted[$0 + cap] - sorted[$0] >= .secondsPerHour }
}

// MARK: - Storage

@Suite("CapLedger: storage")
struct CapLedgerStorageTests {
    @Test func initialiserSortsItsInstants() {
        let l = ledger([30, -10, 0, 30, 5])
        #expect(l.instants == [-10, 0, 5, 30, 30].map { at($0).secondsSinceEpoch })
        #expect(l.count == 5)
    }

    @Test func anEmptyLedgerHasNoEntries() {
        let l = CapLedger()
        #expect(l.count == 0)
        #expect(l.instants.isEmpty)
        #expect(l.count(from: at(-1_000), to: at(1_000)) == 0)
    }

    @Test func insertKeepsTheEntriesInOrder() {
        var l = CapLedger()
        for minute: Int64 in [50, 10, 30, 0, 40, 20, 60, -5] {
            l.insert(at(minute))
            #expect(l.instants == l.instants.sorted())
        }
        #expect(l.instants == [-5, 0, 10, 20, 30, 40, 50, 60].map { at($0).secondsSinceEpoch })
    }

    @Test func insertKeepsDuplicates() {
        var l = ledger([0, 10])
        l.insert(at(10))
        l.insert(at(0))
        #expect(l.instants == [0, 0, 10, 10].map { at($0).secondsSinceEpoch })
    }

    @Test func insertMatchesSortingForRandomInput() {
        var generator = SeededGenerator(seed: 0x1ED6_E700)
        for _ in 0..<50 {
            var l = CapLedger()
            var inserted: [Int64] = []
            for _ in 0..<generator.int(in: 0...40) {
                let seconds = t0.secondsSinceEpoch + Int64(generator.int(in: -20_000...20_000))
                l.insert(Instant(secondsSinceEpoch: seconds))
                inserted.append(seconds)
            }
            #expect(l.instants == inserted.sorted())
        }
    }

    @Test func countIsHalfOpenIncludingTheStartAndExcludingTheEnd() {
        let l = ledger([0, 30, 60])
        #expect(l.count(from: at(0), to: at(60)) == 2)
        #expect(l.count(from: at(0), to: at(60) + 1) == 3)
        #expect(l.count(from: at(0) + 1, to: at(60)) == 1)
        #expect(l.count(from: at(-1), to: at(0)) == 0)
        #expect(l.count(from: at(60), to: at(61)) == 1)
        #expect(l.count(from: at(-100), to: at(100)) == 3)
    }

    @Test func countOfAnEmptyRangeIsZero() {
        let l = ledger([0, 30, 60])
        #expect(l.count(from: at(30), to: at(30)) == 0)
    }

    @Test func countIncludesEveryDuplicate() {
        let l = ledger([0, 0, 0, 10])
        #expect(l.count(from: at(0), to: at(1)) == 3)
        #expect(l.count(from: at(0) + 1, to: at(11)) == 1)
    }

    @Test func countAgreesWithAFilterForRandomRanges() {
        var generator = SeededGenerator(seed: 0xC0_0417)
        for _ in 0..<200 {
            let entries = (0..<generator.int(in: 0...30)).map { _ in Int64(generator.int(in: -100...100)) }
            let l = ledger(entries)
            let start = Int64(generator.int(in: -120...120))
            let end = start + Int64(generator.int(in: 0...120))
            let expected = entries.count { $0 >= start && $0 < end }
            #expect(l.count(from: at(start), to: at(end)) == expected, "entries \(entries) in \(start)..<\(end)")
        }
    }

    @Test func pruneDropsOnlyEntriesBeforeTheInstant() {
        var l = ledger([0, 30, 30, 60])
        l.prune(before: at(30))
        #expect(l.instants == [30, 30, 60].map { at($0).secondsSinceEpoch })
        l.prune(before: at(30) + 1)
        #expect(l.instants == [at(60).secondsSinceEpoch])
    }

    @Test func pruneBeforeTheFirstEntryChangesNothing() {
        var l = ledger([0, 30])
        l.prune(before: at(0))
        l.prune(before: at(-60))
        #expect(l == ledger([0, 30]))
    }

    @Test func pruneAfterTheLastEntryEmptiesTheLedger() {
        var l = ledger([0, 30])
        l.prune(before: at(31))
        #expect(l.count == 0)
        var empty = CapLedger()
        empty.prune(before: at(0))
        #expect(empty.count == 0)
    }
}

// MARK: - The rolling hourly cap

/// One hand-worked case of `earliestWithinHourlyCap`, in minutes from `t0`.
struct HourlyCapCase: Sendable, CustomTestStringConvertible {
    var name: String
    var cap: Int
    var entries: [Int64]
    var from: Int64 = 0
    var limit: Int64 = 24 * 60
    /// Minutes from `t0`; nil when no time within the limit is allowed.
    var expected: Int64?

    var testDescription: String { "cap \(cap): \(name)" }
}

private let hourlyCapCases: [HourlyCapCase] = [
    // cap 1
    HourlyCapCase(name: "empty ledger allows t", cap: 1, entries: [], expected: 0),
    HourlyCapCase(name: "entry 30 min before waits for the hour", cap: 1, entries: [-30], expected: 30),
    HourlyCapCase(name: "entry exactly an hour before allows t", cap: 1, entries: [-60], expected: 0),
    HourlyCapCase(name: "entry 20 min after moves past it by an hour", cap: 1, entries: [20], expected: 80),
    HourlyCapCase(name: "entry exactly an hour after allows t", cap: 1, entries: [60], expected: 0),
    HourlyCapCase(name: "entry at t itself", cap: 1, entries: [0], expected: 60),
    HourlyCapCase(name: "entries before and after", cap: 1, entries: [-30, 40], expected: 100),
    HourlyCapCase(name: "gap of two hours between entries fits", cap: 1, entries: [-30, 90], expected: 30),
    HourlyCapCase(name: "limit one minute short", cap: 1, entries: [-30], limit: 29, expected: nil),
    HourlyCapCase(name: "limit is inclusive", cap: 1, entries: [-30], limit: 30, expected: 30),
    // cap 3
    HourlyCapCase(name: "two in the last hour allow t", cap: 3, entries: [-50, -40], expected: 0),
    HourlyCapCase(name: "three in the last hour", cap: 3, entries: [-50, -40, -30], expected: 10),
    HourlyCapCase(name: "two before and one after", cap: 3, entries: [-50, -40, 5], expected: 10),
    HourlyCapCase(name: "three after", cap: 3, entries: [10, 20, 30], expected: 70),
    HourlyCapCase(name: "lands between entries", cap: 3, entries: [-55, -50, -45, 30], expected: 5),
    HourlyCapCase(name: "three in the hour after push past them", cap: 3, entries: [-50, 20, 30, 40], expected: 80),
    HourlyCapCase(name: "three an hour apart allow t", cap: 3, entries: [-60, -30, -10, 60], expected: 0),
    HourlyCapCase(name: "beyond the limit", cap: 3, entries: [-50, -40, -30], limit: 9, expected: nil),
    HourlyCapCase(name: "at the limit", cap: 3, entries: [-50, -40, -30], limit: 10, expected: 10),
    // cap 10
    HourlyCapCase(name: "nine in the last hour allow t", cap: 10, entries: Array(-59 ... -51), expected: 0),
    HourlyCapCase(name: "ten in the last hour", cap: 10, entries: Array(-59 ... -50), expected: 1),
    HourlyCapCase(name: "ten half an hour ago", cap: 10, entries: Array(-30 ... -21), expected: 30),
    HourlyCapCase(name: "ten before and one after", cap: 10, entries: Array(-45 ... -36) + [20], expected: 15),
    HourlyCapCase(name: "ten right after t", cap: 10, entries: Array(1...10), expected: 61),
    HourlyCapCase(name: "beyond the limit", cap: 10, entries: Array(-30 ... -21), limit: 29, expected: nil),
]

@Suite("CapLedger: earliest time within the hourly cap")
struct CapLedgerHourlyCapTests {
    @Test(arguments: hourlyCapCases)
    func earliestTimeMatchesTheHandWorkedCase(_ c: HourlyCapCase) {
        let result = ledger(c.entries).earliestWithinHourlyCap(from: at(c.from), cap: c.cap, limit: at(c.limit))
        #expect(result == c.expected.map(at))
        if let result {
            let entries = c.entries.map { at($0).secondsSinceEpoch }
            #expect(fitsHourlyCap(entries, inserted: result.secondsSinceEpoch, cap: c.cap))
        }
    }

    @Test(arguments: [1, 3, 10])
    func aLimitBeforeTheStartGivesNil(cap: Int) {
        #expect(CapLedger().earliestWithinHourlyCap(from: at(0), cap: cap, limit: at(-1)) == nil)
    }

    @Test(arguments: [1, 3, 10])
    func aStartEqualToTheLimitIsAllowedWhenFree(cap: Int) {
        #expect(CapLedger().earliestWithinHourlyCap(from: at(0), cap: cap, limit: at(0)) == at(0))
    }

    @Test(arguments: [1, 3, 10])
    func theResultIsNeverBeforeTheStart(cap: Int) {
        let l = ledger(Array(stride(from: -300, through: 300, by: 7)))
        for from in stride(from: Int64(-120), through: 120, by: 13) {
            if let result = l.earliestWithinHourlyCap(from: at(from), cap: cap, limit: at(from + 24 * 60)) {
                #expect(result >= at(from))
            }
        }
    }

    @Test func aCrowdedDayWithCapOneIsSpacedAnHourApart() {
        var l = CapLedger()
        var t = at(0)
        for _ in 0..<24 {
            guard let next = l.earliestWithinHourlyCap(from: t, cap: 1, limit: at(48 * 60)) else {
                Issue.record("no time left after \(l.count) entries")
                return
            }
            l.insert(next)
            t = next
        }
        #expect(l.instants == (0..<24).map { at(Int64($0) * 60).secondsSinceEpoch })
    }

    /// Random minute-aligned ledgers (which may already break the cap elsewhere) and random starts:
    /// the answer fits, lies within the limit, and no earlier minute would have fitted; nil means no
    /// minute up to the limit fits.
    @Test(arguments: [1, 2, 3, 5, 10])
    func randomLedgersGiveTheEarliestFittingMinute(cap: Int) {
        var generator = SeededGenerator(seed: 0x00CA_B1ED + UInt64(cap))
        for trial in 0..<150 {
            let size = generator.int(in: 0...(cap * 4))
            let entries = (0..<size).map { _ in at(Int64(generator.int(in: -180...360))).secondsSinceEpoch }
            let from = at(Int64(generator.int(in: 0...180)))
            let limit = from + Int64(generator.int(in: 0...(8 * 60))) * .secondsPerMinute
            let result = CapLedger(entries.map { Instant(secondsSinceEpoch: $0) })
                .earliestWithinHourlyCap(from: from, cap: cap, limit: limit)
            let context = "trial \(trial): cap \(cap), entries \(entries.sorted()), from \(from), limit \(limit)"
            let end = result ?? limit + .secondsPerMinute
            var earlierFits: Int64? = nil
            for minute in stride(from: from.secondsSinceEpoch, to: end.secondsSinceEpoch, by: 60)
            where fitsHourlyCap(entries, inserted: minute, cap: cap) {
                earlierFits = minute
                break
            }
            #expect(earlierFits == nil, "an earlier minute fits: \(earlierFits ?? 0); \(context)")
            if let result {
                #expect(result >= from && result <= limit, "\(context)")
                #expect(result.secondsSinceEpoch % 60 == 0, "not minute-aligned: \(result); \(context)")
                #expect(fitsHourlyCap(entries, inserted: result.secondsSinceEpoch, cap: cap), "\(context)")
            }
        }
    }

    /// The search steps a whole minute past a crowd of later entries: with an entry off the
    /// minute, the answer fits but may come later than the earliest second that does.
    @Test func pastACrowdOffTheMinuteTheSearchStepsAWholeMinute() {
        // From 9:45 both entries lie within the hour after it: the search moves past 69:30.
        let entries = [at(10), at(69) + 30]
        let result = CapLedger(entries).earliestWithinHourlyCap(from: at(9) + 45, cap: 2, limit: at(24 * 60))
        let seconds = entries.map(\.secondsSinceEpoch)
        #expect(result == at(70) + 30)
        #expect(fitsHourlyCap(seconds, inserted: (at(70) + 30).secondsSinceEpoch, cap: 2))
        // The earliest fitting second is 70:00 (an hour after the entry at 10:00).
        #expect(fitsHourlyCap(seconds, inserted: at(70).secondsSinceEpoch, cap: 2))
        #expect(!fitsHourlyCap(seconds, inserted: at(70).secondsSinceEpoch - 1, cap: 2))
    }

    /// Ledgers that keep the rule everywhere keep it everywhere once the answer is inserted.
    @Test(arguments: [1, 3, 10])
    func insertingTheAnswerIntoAValidLedgerKeepsItValid(cap: Int) {
        var generator = SeededGenerator(seed: 0x7A11D + UInt64(cap))
        for trial in 0..<150 {
            var entries: [Int64] = []
            for _ in 0..<(cap * 6) {
                let candidate = at(Int64(generator.int(in: -240...480))).secondsSinceEpoch
                if wholeLedgerFitsHourlyCap(entries + [candidate], cap: cap) { entries.append(candidate) }
            }
            let from = at(Int64(generator.int(in: -60...240)))
            let limit = from + 12 * .secondsPerHour
            let l = CapLedger(entries.map { Instant(secondsSinceEpoch: $0) })
            let context = "trial \(trial): cap \(cap), entries \(entries.sorted()), from \(from)"
            guard let result = l.earliestWithinHourlyCap(from: from, cap: cap, limit: limit) else {
                Issue.record("no time within 12 hours; \(context)")
                continue
            }
            var inserted = l
            inserted.insert(result)
            #expect(wholeLedgerFitsHourlyCap(inserted.instants, cap: cap), "result \(result); \(context)")
            let earlier = stride(from: from.secondsSinceEpoch, to: result.secondsSinceEpoch, by: 60)
                .first { wholeLedgerFitsHourlyCap(entries + [$0], cap: cap) }
            #expect(earlier == nil, "an earlier minute fits: \(earlier ?? 0); \(context)")
        }
    }
}
