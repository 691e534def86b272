import Foundation
import Testing

@testable import Models

@Suite("SeededGenerator")
struct SeededGeneratorTests {
    @Test func matchesTheSplitMix64ReferenceOutput() {
        // The published SplitMix64 sequence for seed 0.
        var generator = SeededGenerator(seed: 0)
        #expect(
            [generator.next(), generator.next(), generator.next()] == [
                0xE220_A839_7B1D_CDAF, 0x6E78_9E6A_A1B9_65F4, 0x06C4_5D18_8009_454F,
            ])
    }

    @Test func sameSeedSameSequence() {
        var a = SeededGenerator(seed: 2_027)
        var b = SeededGenerator(seed: 2_027)
        var c = SeededGenerator(seed: 2_028)
        let first = (0..<1_000).map { _ in a.next() }
        #expect(first == (0..<1_000).map { _ in b.next() })
        #expect(first != (0..<1_000).map { _ in c.next() })
        #expect(Set(first).count == 1_000)
        #expect(a == b)
    }

    @Test func derivedStreamsAreFixedByStateAndStreamAlone() {
        let root = SeededGenerator(seed: 7)
        var user1 = root.derived(1)
        var user1Again = root.derived(1)
        var user2 = root.derived(2)
        let values1 = (0..<100).map { _ in user1.next() }
        #expect(values1 == (0..<100).map { _ in user1Again.next() })
        #expect(values1 != (0..<100).map { _ in user2.next() })
        // Drawing from one stream does not disturb another, nor the root.
        var other = root.derived(1)
        var untouched = root.derived(2)
        _ = (0..<500).map { _ in other.next() }
        #expect((0..<100).map { _ in untouched.next() } == (0..<100).map { root.derived(2).nextCopy(index: $0) })
        #expect(root == SeededGenerator(seed: 7))
        // A derived stream differs from its parent's own sequence and from another seed's.
        var parent = root
        var derived = root.derived(0)
        #expect((0..<10).map { _ in parent.next() } != (0..<10).map { _ in derived.next() })
        #expect(SeededGenerator(seed: 8).derived(1) != root.derived(1))
    }

    @Test func derivedDependsOnTheParentsPosition() {
        var advanced = SeededGenerator(seed: 7)
        _ = advanced.next()
        #expect(advanced.derived(1) != SeededGenerator(seed: 7).derived(1))
    }

    @Test func unitValuesAreInRangeAndUniform() {
        var generator = SeededGenerator(seed: 1)
        var buckets = [Int](repeating: 0, count: 10)
        var sum = 0.0
        for _ in 0..<100_000 {
            let u = generator.nextUnit()
            #expect(u >= 0 && u < 1)
            buckets[Int(u * 10)] += 1
            sum += u
        }
        #expect(abs(sum / 100_000 - 0.5) < 0.01)
        #expect(buckets.allSatisfy { abs($0 - 10_000) < 500 }, "\(buckets)")
    }

    @Test func chanceHonoursItsProbability() {
        var generator = SeededGenerator(seed: 3)
        #expect((0..<1_000).allSatisfy { _ in !generator.chance(0) })
        #expect((0..<1_000).allSatisfy { _ in generator.chance(1) })
        let hits = (0..<20_000).count(where: { _ in generator.chance(0.25) })
        #expect(abs(hits - 5_000) < 300)
    }

    @Test func integersCoverTheRangeEvenly() {
        var generator = SeededGenerator(seed: 4)
        var counts = [Int: Int]()
        for _ in 0..<60_000 { counts[generator.int(in: -2...3), default: 0] += 1 }
        #expect(counts.keys.sorted() == [-2, -1, 0, 1, 2, 3])
        #expect(counts.values.allSatisfy { abs($0 - 10_000) < 500 }, "\(counts)")
        #expect((0..<100).allSatisfy { _ in generator.int(in: 5...5) == 5 })
    }

    @Test func exponentialHasTheRequestedMean() {
        var generator = SeededGenerator(seed: 5)
        let draws = (0..<50_000).map { _ in generator.exponential(mean: 1_800) }
        #expect(draws.allSatisfy { $0 >= 0 && $0.isFinite })
        #expect(abs(draws.reduce(0, +) / 50_000 - 1_800) < 40)
        // P(X > mean) = 1/e for an exponential distribution.
        let aboveMean = Double(draws.count(where: { $0 > 1_800 })) / 50_000
        #expect(abs(aboveMean - exp(-1)) < 0.01)
    }

    @Test func weightedIndexFollowsTheWeights() {
        var generator = SeededGenerator(seed: 6)
        var counts = [0, 0, 0, 0]
        for _ in 0..<40_000 { counts[generator.weightedIndex([1, 0, 3, 0])] += 1 }
        #expect(counts[1] == 0 && counts[3] == 0)
        #expect(abs(counts[0] - 10_000) < 500 && abs(counts[2] - 30_000) < 500, "\(counts)")
        #expect((0..<100).allSatisfy { _ in generator.weightedIndex([0, 0, 5]) == 2 })
    }

    @Test func worksWithStandardLibraryRandomAPIs() {
        var a = SeededGenerator(seed: 9)
        var b = SeededGenerator(seed: 9)
        #expect([1, 2, 3, 4, 5, 6, 7, 8].shuffled(using: &a) == [1, 2, 3, 4, 5, 6, 7, 8].shuffled(using: &b))
        #expect(Int.random(in: 0..<1_000, using: &a) == Int.random(in: 0..<1_000, using: &b))
    }
}

extension SeededGenerator {
    /// The `index`-th value (0-based) this generator would produce, without changing it.
    fileprivate func nextCopy(index: Int) -> UInt64 {
        var copy = self
        for _ in 0..<index { _ = copy.next() }
        return copy.next()
    }
}

@Suite("DeepLink")
struct DeepLinkTests {
    static let all: [DeepLink] =
        [
            .dashboard, .moodLog, .coachChat, .workoutStart, .workoutLog, .mealLog(nil), .quickAdd, .energyLog,
            .checkIn,
            .weeklyReview, .achievements, .inbox,
        ] + MealType.allCases.map { .mealLog($0) }

    @Test func everyLinkRoundTripsThroughItsURL() {
        for link in DeepLinkTests.all {
            #expect(link.description.hasPrefix("engage://"), "\(link)")
            #expect(DeepLink(url: link.description) == link, "\(link)")
        }
        #expect(Set(DeepLinkTests.all.map(\.description)).count == DeepLinkTests.all.count)
    }

    @Test func knownURLs() {
        #expect(DeepLink.mealLog(.lunch).description == "engage://meal/log/lunch")
        #expect(DeepLink.mealLog(nil).description == "engage://meal/log")
        #expect(DeepLink(url: "engage://workout/start") == .workoutStart)
        #expect(DeepLink(url: "engage://meal/log/dinner") == .mealLog(.dinner))
    }

    @Test(arguments: [
        "", "engage://", "engage://nowhere", "https://dashboard", "engage://meal/log/brunch",
        "ENGAGE://dashboard", "engage://dashboard/", " engage://dashboard",
    ])
    func unknownURLsAreRejected(url: String) {
        #expect(DeepLink(url: url) == nil)
    }

    @Test func codesAsItsURL() throws {
        let data = try JSONEncoder().encode(DeepLinkTests.all)
        #expect(try JSONDecoder().decode([DeepLink].self, from: data) == DeepLinkTests.all)
        #expect(try JSONDecoder().decode([DeepLink].self, from: Data(#"["engage://check-in"]"#.utf8)) == [.checkIn])
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([DeepLink].self, from: Data(#"["engage://x"]"#.utf8))
        }
    }
}

@Suite("Categories and kinds")
struct CatalogTests {
    @Test func everyCategoryIsRegisteredOnce() {
        let ids = NotificationCategory.all.map(\.id)
        #expect(Set(ids).count == ids.count)
        #expect(Set(ids) == Set(NotificationCategoryID.allCases))
    }

    @Test func everyActionBelongsToExactlyOneCategory() {
        let system: Set<NotificationActionID> = [.defaultTap, .dismiss]
        for action in NotificationActionID.allCases {
            let owners = NotificationCategory.all.filter { $0.actions.contains { $0.id == action } }
            if system.contains(action) {
                #expect(owners.isEmpty, "\(action) is the system's, not a category's")
            } else {
                #expect(owners.count == 1, "\(action) is in \(owners.map(\.id))")
            }
        }
        for category in NotificationCategory.all {
            let ids = category.actions.map(\.id)
            #expect(Set(ids).count == ids.count, "\(category.id) repeats an action")
            #expect(category.actions.allSatisfy { !$0.title.isEmpty })
            // iOS shows at most four actions in the expanded view.
            #expect(category.actions.count <= 4)
        }
    }

    @Test func seedSpellings() {
        #expect(NotificationCategoryID.reEngagement.rawValue == "RE_ENGAGEMENT")
        #expect(NotificationActionID.defaultTap.rawValue == "com.apple.UNNotificationDefaultActionIdentifier")
        #expect(NotificationActionID.dismiss.rawValue == "com.apple.UNNotificationDismissActionIdentifier")
        #expect(NotificationActionID.snooze30.rawValue == "SNOOZE_30")
    }

    @Test func everyKindsCategoryIsRegistered() {
        let registered = Set(NotificationCategory.all.map(\.id))
        for kind in NotificationKind.allCases {
            #expect(registered.contains(kind.category), "\(kind)")
        }
    }

    @Test func capExemptionsAndLevels() {
        #expect(NotificationKind.allCases.filter(\.isTransactional) == [.followRequest, .mention, .securityAlert])
        #expect(
            NotificationKind.allCases.filter { $0.defaultInterruptionLevel.breaksThroughQuietHours } == [.securityAlert]
        )
        #expect(InterruptionLevel.passive < .active && InterruptionLevel.active < .timeSensitive)
        #expect(InterruptionLevel.timeSensitive < .critical)
        // The order is the order of the cases (a new case needs its place in `rank`).
        #expect(InterruptionLevel.allCases == InterruptionLevel.allCases.sorted())
        #expect(InterruptionLevel.allCases.filter(\.breaksThroughQuietHours) == [.critical])
    }

    @Test func mealsAreOrderedByTheirTime() {
        #expect(MealType.allCases.sorted() == [.breakfast, .lunch, .snack, .dinner])
        #expect(MealType.lunch.defaultTime == LocalTimeOfDay(hour: 12, minute: 30))
    }

    @Test func contentDefaultsComeFromTheKind() {
        let content = NotificationContent(kind: .reEngagement, title: "We miss you", body: "…", relevanceScore: 3)
        #expect(content.category == .reEngagement)
        #expect(content.threadID == "reEngagement")
        #expect(content.interruptionLevel == .timeSensitive)
        #expect(content.relevanceScore == 1)
        #expect(NotificationContent(kind: .hydration, title: "t", body: "b", relevanceScore: -1).relevanceScore == 0)
        let custom = NotificationContent(
            kind: .hydration, title: "t", body: "b", category: .system, threadID: "water", interruptionLevel: .passive)
        #expect(custom.category == .system && custom.threadID == "water" && custom.interruptionLevel == .passive)
    }
}
