import Models
import Testing

@testable import Simulation

/// Each invariant is planted once and must be caught; the clean history next to it must pass.
@Suite struct InvariantCheckerTests {
    let london = ZoneRules(identifier: "Europe/London")!

    func profile(
        absence: AbsenceResponse = .lightNudge, configure: (inout NotificationPreferences) -> Void = { _ in }
    ) -> UserProfile {
        var preferences = NotificationPreferences()
        configure(&preferences)
        return UserProfile(
            id: "u1", displayName: "Ana", timeZone: "Europe/London",
            communication: CommunicationPreferences(absenceResponse: absence), preferences: preferences)
    }

    func delivery(_ id: String, _ kind: NotificationKind, _ at: String, level: InterruptionLevel = .active)
        -> ObservedDelivery
    {
        ObservedDelivery(id: id, kind: kind, level: level, at: Instant(iso8601: at)!)
    }

    func violations(_ deliveries: [ObservedDelivery], profile: UserProfile) -> [Invariant] {
        var checker = InvariantChecker()
        return deliveries.flatMap { checker.observe($0, profile: profile, zone: london) }
    }

    @Test func aDeliveryInQuietHoursThatWrapMidnightIsCaughtUnlessCritical() {
        let user = profile {
            $0.quietHours = try! QuietHours(start: LocalTimeOfDay("22:00")!, end: LocalTimeOfDay("07:00")!)
        }
        #expect(
            violations([delivery("a", .hydration, "2027-06-01T23:30:00+01:00")], profile: user) == [
                .noDeliveryInQuietHours
            ])
        #expect(
            violations([delivery("b", .hydration, "2027-06-02T06:59:00+01:00")], profile: user) == [
                .noDeliveryInQuietHours
            ])
        #expect(violations([delivery("c", .hydration, "2027-06-02T07:00:00+01:00")], profile: user).isEmpty)
        #expect(
            violations([delivery("d", .securityAlert, "2027-06-01T23:30:00+01:00", level: .critical)], profile: user)
                .isEmpty)
    }

    @Test func reEngagementForGiveMeSpaceIsCaught() {
        let delivered = [delivery("reEngagement.2027-06-01.1", .reEngagement, "2027-06-04T10:00:00+01:00")]
        #expect(violations(delivered, profile: profile(absence: .giveMeSpace)) == [.noReEngagementForGiveMeSpace])
        #expect(violations(delivered, profile: profile(absence: .checkInOnMe)).isEmpty)
    }

    @Test func theHourlyCapIsCheckedOverRollingWindows() {
        let user = profile { $0.maxPerHour = 2 }
        let crowded = [
            delivery("a", .hydration, "2027-06-01T09:00:00Z"), delivery("b", .mealReminder, "2027-06-01T09:30:00Z"),
            delivery("c", .hydration, "2027-06-01T09:59:00Z"),
        ]
        #expect(violations(crowded, profile: user) == [.perHourCapHeld])
        let spaced = [
            delivery("a", .hydration, "2027-06-01T09:00:00Z"), delivery("b", .mealReminder, "2027-06-01T09:30:00Z"),
            delivery("c", .hydration, "2027-06-01T10:00:00Z"),
        ]
        #expect(violations(spaced, profile: user).isEmpty)
        // Transactional kinds are exempt.
        let exempt = crowded.dropLast() + [delivery("c", .securityAlert, "2027-06-01T09:59:00Z", level: .critical)]
        #expect(violations(Array(exempt), profile: user).isEmpty)
    }

    @Test func theDailyCapIsCheckedPerLocalDay() {
        let user = profile { $0.maxPerDay = 2 }
        // 23:30 BST on June 1 and 00:30 BST on June 2 are different local days although both are June 1 UTC... or not.
        let twoDays = [
            delivery("a", .hydration, "2027-06-01T08:00:00+01:00"),
            delivery("b", .hydration, "2027-06-01T23:30:00+01:00"),
            delivery("c", .hydration, "2027-06-02T00:30:00+01:00"),
        ]
        #expect(violations(twoDays, profile: user).isEmpty)
        let oneDay = twoDays.dropLast() + [delivery("c", .hydration, "2027-06-01T23:45:00+01:00")]
        #expect(violations(Array(oneDay), profile: user) == [.perDayCapHeld])
    }

    /// The checker trims its memories every three simulated days: a duplicate within the week is
    /// still caught across a trim, and an identifier is forgotten only once it is a week old.
    @Test func aDuplicateIsCaughtAcrossATrimAndForgottenAfterAWeek() {
        let id = "mealReminder.2027-06-01.lunch"
        let acrossTrim = [
            delivery(id, .mealReminder, "2027-06-01T12:30:00+01:00"),
            delivery("hydration.2027-06-05.0900", .hydration, "2027-06-05T09:00:00+01:00"),
            delivery(id, .mealReminder, "2027-06-06T12:30:00+01:00"),
        ]
        #expect(violations(acrossTrim, profile: profile()) == [.noDuplicateDelivery])
        let afterAWeek = [
            delivery(id, .mealReminder, "2027-06-01T12:30:00+01:00"),
            delivery("hydration.2027-06-09.0900", .hydration, "2027-06-09T09:00:00+01:00"),
            delivery(id, .mealReminder, "2027-06-09T12:30:00+01:00"),
        ]
        #expect(violations(afterAWeek, profile: profile()).isEmpty)
    }

    @Test func aDuplicateDeliveryIsCaught() {
        let twice = [
            delivery("mealReminder.2027-06-01.lunch", .mealReminder, "2027-06-01T12:30:00+01:00"),
            delivery("mealReminder.2027-06-01.lunch", .mealReminder, "2027-06-01T13:30:00+01:00"),
        ]
        #expect(violations(twice, profile: profile()) == [.noDuplicateDelivery])
    }

    @Test func aDisabledKindDeliveredIsCaught() {
        let user = profile { $0.settings[.hydration] = .disabled }
        #expect(
            violations([delivery("h", .hydration, "2027-06-01T12:00:00Z")], profile: user) == [
                .disabledKindNeverDelivered
            ])
    }

    @Test func twoMorningGreetingsOnOneLocalDayAreCaughtAcrossTheFallBack() {
        // London falls back on 2027-10-31: 01:30 happens twice; two greetings that day are one too many.
        let fallBack = [
            delivery("morningGreeting.2027-10-31", .morningGreeting, "2027-10-31T00:30:00Z"),
            delivery("morningGreeting.2027-10-31.snooze1", .morningGreeting, "2027-10-31T01:30:00Z"),
        ]
        #expect(violations(fallBack, profile: profile()) == [.morningGreetingOncePerLocalDay])
    }

    @Test func morePendingThanTheLimitIsCaught() {
        let checker = InvariantChecker()
        #expect(checker.observePending(count: 64).isEmpty)
        #expect(checker.observePending(count: 65) == [.atMost64Pending])
    }
}
