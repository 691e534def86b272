import Models
import Scheduling
import TestSupport
import Testing

@testable import Engagement

/// `UserEngine.withdrawals(of:)` agrees with `handle`: what a phone withdraws on its user's event
/// (the plan's `withdrawnBy`) is what the engine no longer plans at that time once told of the
/// event, whatever the engine cancels as already done the phone withdrew, and nothing the engine
/// plans after hearing of the event is withdrawn by it.
@Suite("Withdrawals agree with the engine")
struct WithdrawalAgreementTests {
    /// The event the phone matches for `input`, if the phone reports it.
    static func event(_ input: EngineInput, at instant: Instant) -> WithdrawingEvent? {
        switch input {
        case .activity(let activity, _): WithdrawingEvent(activity, at: instant)
        case .notificationResponse(_, _, let action): WithdrawingEvent(answering: action, at: instant)
        default: nil
        }
    }

    /// The random inputs of the snapshot tests, with workout reminders answered too.
    static func inputs(seed: UInt64) -> [(EngineInput, Instant)] {
        var inputs = SnapshotTests.inputs(seed: seed, count: 1_200, start: instant("2027-03-01T07:00:00Z"))
        for index in inputs.indices where index % 23 == 22 {
            let at = inputs[index].1
            let day = LocalDate(daysSinceEpoch: at.secondsSinceEpoch / 86_400)
            inputs[index].0 = .notificationResponse(
                requestID: "workoutReminder.\(day).0700", kind: .workoutReminder,
                action: index % 2 == 0 ? .completeWorkout : .skipWorkout)
        }
        return inputs
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6] as [UInt64])
    func whatThePhoneWithdrawsTheEngineNoLongerPlans(seed: UInt64) {
        let start = instant("2027-03-01T07:00:00Z")
        let profile = SnapshotTests.profile(seed: seed)
        var engine = UserEngine(
            profile: profile, zone: ZoneRules(identifier: profile.timeZone)!, now: start,
            configuration: seed % 2 == 0 ? .withoutAttentionBudget : EngineConfiguration())
        var withdrawn = 0
        var cancelledAsDone = 0
        for (input, at) in Self.inputs(seed: seed) {
            var moot: [PlannedNotification] = []
            if let event = Self.event(input, at: at) {
                moot = engine.planned.filter { item in
                    item.fireAt > at && ChannelPolicy.channel(for: item.kind) == .local
                        && engine.withdrawals(of: item.id).contains { $0.isMet(by: event) }
                }
            }
            let effects = engine.handle(input, at: at)
            let after = Dictionary(engine.planned.map { ($0.id, $0.fireAt) }, uniquingKeysWith: { first, _ in first })
            for item in moot {
                #expect(after[item.id] != item.fireAt, "\(item.id) still at \(item.fireAt.iso8601) after \(input)")
            }
            // Nor does it withdraw what the engine planned knowing of it.
            if let event = Self.event(input, at: at) {
                for item in engine.planned where ChannelPolicy.channel(for: item.kind) == .local {
                    #expect(
                        !engine.withdrawals(of: item.id).contains { $0.isMet(by: event) },
                        "\(item.id) planned after \(input) is withdrawn by it")
                }
            }
            withdrawn += moot.count
            let mootIDs = Set(moot.map(\.id.description))
            for case .trace(let entry) in effects where entry.decision == .cancelled && entry.reason == .alreadyDone {
                cancelledAsDone += 1
                #expect(mootIDs.contains(entry.requestID), "\(entry.requestID) cancelled as done after \(input)")
            }
        }
        // Both directions were exercised, or the test proves little.
        #expect(withdrawn > 3 && cancelledAsDone > 3, "withdrawn \(withdrawn), cancelled as done \(cancelledAsDone)")
    }

    @Test func aMealReminderIsWithdrawnByThatMealOnItsLocalDayOnly() throws {
        let zone = try #require(ZoneRules(identifier: "Asia/Kathmandu"))  // UTC+5:45
        let id = OccurrenceID(.mealReminder, date: LocalDate(year: 2027, month: 3, day: 1), .meal(.lunch))
        let withdrawals = UserEngine.withdrawals(
            of: id, zone: zone, heard: HeardActivity(lastActiveAt: instant("2027-02-20T00:00:00Z")))
        #expect(withdrawals.count == 1)
        let lunch = { (at: String) in WithdrawingEvent(.mealLogged(.lunch), at: instant(at)) }
        // Local midnight is 18:15 UTC the day before.
        #expect(withdrawals[0].isMet(by: lunch("2027-02-28T18:15:00Z")))
        #expect(!withdrawals[0].isMet(by: lunch("2027-02-28T18:14:59Z")))
        #expect(withdrawals[0].isMet(by: lunch("2027-03-01T18:14:59Z")))
        #expect(!withdrawals[0].isMet(by: lunch("2027-03-01T18:15:00Z")))
        #expect(!withdrawals[0].isMet(by: WithdrawingEvent(.mealLogged(.dinner), at: instant("2027-03-01T06:00:00Z"))))
        #expect(
            !withdrawals[0].isMet(
                by: WithdrawingEvent(.appOpened(sessionSeconds: 60), at: instant("2027-03-01T06:00:00Z"))))
    }

    @Test func onlyWhatTheEngineHasNotHeardOfWithdraws() throws {
        let zone = try #require(ZoneRules(identifier: "Asia/Kathmandu"))
        let id = try #require(OccurrenceID(requestID: "postWorkoutCheckIn.2027-03-01.0700"))
        let heard = instant("2027-03-01T06:00:00Z")
        let withdrawal = try #require(
            UserEngine.withdrawals(of: id, zone: zone, heard: HeardActivity(lastActiveAt: heard)).first)
        #expect(withdrawal.from == heard + 1)
        #expect(!withdrawal.isMet(by: WithdrawingEvent(.workoutCompleted(durationMinutes: 30), at: heard)))
        // Past the day's end the engine has heard of the whole day: nothing left to withdraw by.
        #expect(
            UserEngine.withdrawals(
                of: id, zone: zone, heard: HeardActivity(lastActiveAt: instant("2027-03-01T18:15:00Z"))
            ).isEmpty)
    }

    @Test func aMealOrCheckInReminderCountsFromItsDaysStartWhateverTheEngineHeard() throws {
        let zone = try #require(ZoneRules(identifier: "Asia/Kathmandu"))
        let day = LocalDate(year: 2027, month: 3, day: 1)
        let start = instant("2027-02-28T18:15:00Z")
        for id in [OccurrenceID(.mealReminder, date: day, .meal(.dinner)), OccurrenceID(.checkInReminder, date: day)] {
            let withdrawals = ["2027-02-27T00:00:00Z", "2027-03-01T06:00:00Z", "2027-03-01T12:00:00Z"].map {
                UserEngine.withdrawals(of: id, zone: zone, heard: HeardActivity(lastActiveAt: instant($0)))
            }
            #expect(withdrawals.allSatisfy { $0 == withdrawals[0] } && withdrawals[0].first?.from == start, "\(id)")
            #expect(
                UserEngine.withdrawals(
                    of: id, zone: zone, heard: HeardActivity(lastActiveAt: instant("2027-03-01T18:15:00Z"))
                ).isEmpty)
        }
        // A dinner heard of inside the day (logged in another zone, on its own date there):
        // only a later one withdraws. One logged after the last activity heard of is not heard.
        let dinner = OccurrenceID(.mealReminder, date: day, .meal(.dinner))
        let logged = instant("2027-03-01T01:00:00Z")
        let elsewhere = OccurrenceID(.mealReminder, date: LocalDate(year: 2027, month: 2, day: 28), .meal(.dinner))
        let heard = HeardActivity(lastActiveAt: logged, done: OccurrenceMap([(elsewhere, logged)]))
        #expect(UserEngine.withdrawals(of: dinner, zone: zone, heard: heard).first?.from == logged + 1)
        let notYet = HeardActivity(lastActiveAt: logged - 1, done: OccurrenceMap([(elsewhere, logged)]))
        #expect(UserEngine.withdrawals(of: dinner, zone: zone, heard: notYet).first?.from == start)
    }

    @Test func aDayOfTwentyFiveHoursIsWithdrawnWhole() throws {
        // Europe/Berlin falls back on 2027-10-31: the local day lasts 25 hours.
        let zone = try #require(ZoneRules(identifier: "Europe/Berlin"))
        let id = OccurrenceID(.checkInReminder, date: LocalDate(year: 2027, month: 10, day: 31), .day)
        let withdrawal = try #require(
            UserEngine.withdrawals(
                of: id, zone: zone, heard: HeardActivity(lastActiveAt: instant("2027-10-01T00:00:00Z"))
            ).first)
        #expect(withdrawal.from == instant("2027-10-30T22:00:00Z"))
        #expect(withdrawal.until == instant("2027-10-31T23:00:00Z"))
    }

    @Test func aLapseNudgeIsWithdrawnByAnythingAfterTheLastActivityKnown() throws {
        let zone = try #require(ZoneRules(identifier: "America/St_Johns"))  // UTC-3:30
        let id = OccurrenceID(.reEngagement, date: LocalDate(year: 2027, month: 3, day: 4), .attempt(1))
        let last = instant("2027-03-01T12:00:00Z")
        let withdrawal = try #require(
            UserEngine.withdrawals(of: id, zone: zone, heard: HeardActivity(lastActiveAt: last)).first)
        #expect(withdrawal.until == nil)
        #expect(!withdrawal.isMet(by: WithdrawingEvent(.appOpened(sessionSeconds: 5), at: last)))
        #expect(withdrawal.isMet(by: WithdrawingEvent(.moodLogged, at: last + 1)))
        #expect(withdrawal.isMet(by: try #require(WithdrawingEvent(answering: .defaultTap, at: last + 60))))
        #expect(WithdrawingEvent(answering: .dismiss, at: last + 60) == nil)
        #expect(WithdrawingEvent(answering: .snooze, at: last + 60) == nil)
    }

    @Test func kindsOnlyTheServerWithdrawsNameNothing() {
        let zone = ZoneRules(identifier: "Pacific/Chatham")!
        let day = LocalDate(year: 2027, month: 3, day: 1)
        let last = instant("2027-02-27T00:00:00Z")
        #expect(
            UserEngine.withdrawals(
                of: OccurrenceID(.morningGreeting, date: day), zone: zone, heard: HeardActivity(lastActiveAt: last)
            )
            .isEmpty)
        #expect(
            UserEngine.withdrawals(ofRequest: "not an occurrence", zone: zone, heard: HeardActivity(lastActiveAt: last))
                .isEmpty)
    }
}
