import Foundation
import Models
import Scheduling
import Storage
import Testing

@testable import Runtime

/// The rules every shell applies to a user's due rows when it claims them (`OutboxClaim`).
@Suite("ClaimTimePolicy")
struct ClaimTimePolicyTests {
    static let berlin = ZoneRules(identifier: "Europe/Berlin")!

    static func profile(
        zone: String = "Europe/Berlin", quiet: (Int, Int)? = (22 * 60, 7 * 60), maxPerDay: Int? = nil,
        maxPerHour: Int = 10
    ) -> UserProfile {
        var preferences = NotificationPreferences()
        if let quiet {
            preferences.quietHours = try! QuietHours(
                start: LocalTimeOfDay(minutesSinceMidnight: quiet.0), end: LocalTimeOfDay(minutesSinceMidnight: quiet.1)
            )
        }
        preferences.maxPerDay = maxPerDay
        preferences.maxPerHour = maxPerHour
        return UserProfile(id: "u1", displayName: "Ana Lima", timeZone: zone, preferences: preferences)
    }

    /// An alert of `kind`: by default a mention, which a claim may still send a day late.
    static func alert(
        _ name: String, at due: Instant, level: InterruptionLevel = .active, kind: NotificationKind = .mention
    ) -> OutboxRow {
        let request = NotificationRequest(
            identifier: RequestID(name),
            content: NotificationContent(
                kind: kind, title: "Title \(name)", body: "Body", interruptionLevel: level),
            trigger: .date(due))
        return OutboxRow(
            key: OutboxKey.make("u1", request.identifier, due, .push), userID: "u1", requestID: request.identifier,
            dueAt: due, payload: .alert(request))
    }

    static func instant(_ text: String) -> Instant { Instant(iso8601: text)! }

    @Test("One due alert outside quiet hours is performed as it is, and counted")
    func oneAlertGoes() {
        let now = Self.instant("2027-03-01T11:00:00Z")  // 12:00 in Berlin
        let row = Self.alert("a", at: now - 60)
        let decision = ClaimTimePolicy.decide(
            rows: [row], rules: .init(Self.profile()), zone: Self.berlin, tally: .none, at: now)
        #expect(decision.perform == [row])
        #expect(decision.deferred.isEmpty)
        #expect(decision.merged == nil)
        #expect(decision.tallyAfter?.sentToday == 1)
        #expect(decision.sendBefore == Self.instant("2027-03-01T21:00:00Z"))  // 22:00 in Berlin
    }

    @Test("A backlog of alerts becomes one alert that counts them, with a stable key")
    func backlogIsMerged() throws {
        let now = Self.instant("2027-03-01T11:00:00Z")
        let rows = [Self.alert("a", at: now - 3_600), Self.alert("b", at: now - 600), Self.alert("c", at: now - 60)]
        let decision = ClaimTimePolicy.decide(
            rows: rows, rules: .init(Self.profile()), zone: Self.berlin, tally: .none, at: now)
        let merge = try #require(decision.merged)
        #expect(merge.replacedKeys == rows.map(\.key))
        #expect(decision.perform == [merge.row])
        #expect(merge.row.dueAt == rows[2].dueAt)
        let request = try #require(merge.row.payload.notification)
        #expect(request.content.body.hasPrefix("3 updates: Title a · Title b · Title c"))
        #expect(request.identifier == merge.row.requestID)
        let again = ClaimTimePolicy.decide(
            rows: rows, rules: .init(Self.profile()), zone: Self.berlin, tally: .none, at: now + 5)
        #expect(again.merged?.row.key == merge.row.key)  // a rescue merges to the same apns-id
    }

    @Test("A rescue sends an alert claimed before alone, under its own key, and merges nothing with it")
    func rescueNeverMergesWhatMayHaveGoneOut() {
        let now = Self.instant("2027-03-01T11:00:00Z")
        let rows = [Self.alert("a", at: now - 600), Self.alert("b", at: now - 300), Self.alert("c", at: now - 60)]
        let decision = ClaimTimePolicy.decide(
            rows: rows, rules: .init(Self.profile()), zone: Self.berlin, tally: .none, at: now,
            claimedBefore: [rows[0].key])
        #expect(decision.perform == [rows[0]])
        #expect(decision.merged == nil)
        #expect(decision.deferred.isEmpty)  // b and c stay due for the next claim
    }

    @Test("A critical alert and a repeating one go alone; what follows them waits, in order")
    func someAlertsGoAlone() throws {
        let now = Self.instant("2027-03-01T11:00:00Z")
        let a = Self.alert("a", at: now - 900)
        let b = Self.alert("b", at: now - 600)
        let critical = Self.alert("c", at: now - 300, level: .critical)
        let d = Self.alert("d", at: now - 60)
        let first = ClaimTimePolicy.decide(
            rows: [a, b, critical, d], rules: .init(Self.profile()), zone: Self.berlin, tally: .none, at: now)
        #expect(first.merged?.replacedKeys == [a.key, b.key])  // the run before the critical one
        let second = ClaimTimePolicy.decide(
            rows: [critical, d], rules: .init(Self.profile()), zone: Self.berlin, tally: .none, at: now)
        #expect(second.perform == [critical])
        #expect(second.merged == nil)
        var daily = Self.alert("e", at: now - 30)
        var repeating = try #require(daily.payload.notification)
        repeating.trigger = .calendar(CalendarMatch(hour: 8, minute: 0), repeats: true)
        daily.payload = .alert(repeating)
        let third = ClaimTimePolicy.decide(
            rows: [daily, d], rules: .init(Self.profile()), zone: Self.berlin, tally: .none, at: now)
        #expect(third.perform == [daily])
    }

    @Test("Alerts claimed within a minute of their due instant go as planned and are counted")
    func onTimeAlertsGoAsPlanned() {
        let now = Self.instant("2027-03-01T20:59:10Z")  // 21:59:10 in Berlin, quiet hours from 22:00
        let digests = [Self.alert("a", at: now - 59), Self.alert("b", at: now - 59)].sorted { $0.key < $1.key }
        let decision = ClaimTimePolicy.decide(
            rows: digests, rules: .init(Self.profile(maxPerHour: 1)), zone: Self.berlin, tally: .none, at: now,
            guardSeconds: 120)
        // Neither merged, nor held by the guard or the hourly cap: the engine counted both.
        #expect(decision.perform == digests)
        #expect(decision.merged == nil && decision.deferred.isEmpty)
        #expect(decision.tallyAfter?.sentThisHour == 2)
        #expect(decision.sendBefore == Self.instant("2027-03-01T21:00:00Z"))
        // A second later they are a backlog: both held by the guard before quiet hours.
        let late = ClaimTimePolicy.decide(
            rows: digests, rules: .init(Self.profile()), zone: Self.berlin, tally: .none, at: now + 1,
            guardSeconds: 120)
        #expect(late.perform.isEmpty && late.deferred.count == 2)
        #expect(
            ClaimTimePolicy.isOnTime(now - 59, at: now) && !ClaimTimePolicy.isOnTime(now - 60, at: now)
                && ClaimTimePolicy.isOnTime(now, at: now))
    }

    @Test("An alert on time found inside quiet hours waits for their end; a critical one goes")
    func onTimeInQuietHoursWaits() {
        let now = Self.instant("2027-03-01T02:00:00Z")  // 03:00 in Berlin
        let ordinary = Self.alert("a", at: now)
        let critical = Self.alert("b", at: now, level: .critical)
        let decision = ClaimTimePolicy.decide(
            rows: [ordinary, critical], rules: .init(Self.profile()), zone: Self.berlin, tally: .none, at: now)
        #expect(decision.perform == [critical])
        #expect(
            decision.deferred == [
                .init(
                    key: ordinary.key, until: Self.instant("2027-03-01T06:00:00Z"), reason: "quietHours",
                    firstDueAt: now)
            ])
        #expect(decision.tallyAfter?.sentToday == 1)
    }

    @Test("Alerts on time behind a late one wait with it: the user's alerts keep their order")
    func aBacklogTakesTheAlertsOnTimeAlong() throws {
        let now = Self.instant("2027-03-01T11:00:00Z")  // 12:00 in Berlin
        let late = Self.alert("a", at: now - 3_600)
        let fresh = Self.alert("b", at: now)
        let full = AlertTally.none.adding(oneAt: Self.berlin.localDateTime(at: now))
        let held = ClaimTimePolicy.decide(
            rows: [late, fresh], rules: .init(Self.profile(maxPerHour: 1)), zone: Self.berlin, tally: full, at: now)
        #expect(held.perform.isEmpty)
        #expect(held.deferred.map(\.key) == [late.key, fresh.key])
        let merged = ClaimTimePolicy.decide(
            rows: [late, fresh], rules: .init(Self.profile()), zone: Self.berlin, tally: .none, at: now)
        #expect(try #require(merged.merged).replacedKeys == [late.key, fresh.key])
    }

    @Test("An alert sent again after a claim that may have sent it is not counted twice")
    func aResendIsNotCountedAgain() {
        let now = Self.instant("2027-03-01T11:00:00Z")
        let onTime = Self.alert("a", at: now)
        let late = Self.alert("b", at: now - 600)
        let local = Self.berlin.localDateTime(at: now)
        let once = AlertTally.none.adding(oneAt: local)
        for row in [onTime, late] {
            let decision = ClaimTimePolicy.decide(
                rows: [row], rules: .init(Self.profile(maxPerHour: 2)), zone: Self.berlin, tally: once, at: now,
                claimedBefore: [row.key])
            #expect(decision.perform == [row])
            #expect(decision.tallyAfter == nil)
        }
        // Its own first attempt filled the hour: the re-send goes, alone; the next alert waits.
        let next = Self.alert("c", at: now - 300)
        let rescue = ClaimTimePolicy.decide(
            rows: [late, next], rules: .init(Self.profile(maxPerHour: 1)), zone: Self.berlin, tally: once, at: now,
            claimedBefore: [late.key])
        #expect(rescue.perform == [late])
        #expect(rescue.deferred.map(\.key) == [next.key] && rescue.deferred.first?.reason == "maxPerHour")
    }

    @Test("A late alert past its kind's staleness, from when it was first due, is completed unsent")
    func aStaleAlertExpires() {
        let now = Self.instant("2027-03-01T11:00:00Z")  // 12:00 in Berlin
        // A workout reminder is stale ten minutes after it was due; a mention (a social group's
        // alert) after a day; a deferral moves the row's due instant, not the first one.
        let stale = Self.alert("w", at: now - 660, kind: .workoutReminder)
        let deferred = Self.alert("d", at: now - 120, kind: .workoutReminder)
        let fresh = Self.alert("m", at: now - 20 * 3_600)
        let decision = ClaimTimePolicy.decide(
            rows: [fresh, stale, deferred], rules: .init(Self.profile()), zone: Self.berlin, tally: .none, at: now,
            firstDueAt: [deferred.key: now - 3_600])
        #expect(Set(decision.expired) == [stale.key, deferred.key])
        #expect(decision.perform == [fresh])
        #expect(decision.tallyAfter?.sentToday == 1)
        let onTime = Self.alert("t", at: now - 30, kind: .workoutReminder)
        let within = Self.alert("i", at: now - 540, kind: .workoutReminder)
        let kept = ClaimTimePolicy.decide(
            rows: [within, onTime], rules: .init(Self.profile()), zone: Self.berlin, tally: .none, at: now)
        #expect(kept.expired.isEmpty)
        #expect(kept.merged?.replacedKeys == [within.key, onTime.key])
    }

    @Test("A zone the worker does not know holds the alerts an hour, unsent")
    func unknownZoneHolds() {
        let now = Self.instant("2027-03-01T11:00:00Z")
        let row = Self.alert("a", at: now - 3_600)
        let decision = ClaimTimePolicy.decide(
            rows: [row], rules: .init(Self.profile(zone: "Mars/Olympus")), zone: nil, tally: .none, at: now)
        #expect(decision.perform.isEmpty)
        #expect(
            decision.deferred == [
                .init(key: row.key, until: now + 3_600, reason: "unknownTimeZone", firstDueAt: row.dueAt)
            ])
    }

    @Test("Quiet hours ending in the hour that comes twice end at its second pass, not in the past")
    func fallBackRepeatedHour() {
        // New York falls back on 2027-11-07 at 02:00 EDT to 01:00 EST; quiet hours 22:00-01:30.
        let newYork = ZoneRules(identifier: "America/New_York")!
        let profile = Self.profile(zone: "America/New_York", quiet: (22 * 60, 90))
        let now = Self.instant("2027-11-07T06:10:00Z")  // 01:10 EST, the second pass
        let decision = ClaimTimePolicy.decide(
            rows: [Self.alert("a", at: now - 3_600)], rules: .init(profile), zone: newYork, tally: .none, at: now)
        #expect(decision.deferred.first?.until == Self.instant("2027-11-07T06:30:00Z"))  // 01:30 EST
    }

    @Test("In quiet hours an alert waits for their end; a critical one goes through")
    func quietHoursDefer() {
        let now = Self.instant("2027-03-01T02:00:00Z")  // 03:00 in Berlin
        let ordinary = Self.alert("a", at: now - 60)
        let critical = Self.alert("b", at: now - 30, level: .critical)
        let decision = ClaimTimePolicy.decide(
            rows: [ordinary, critical], rules: .init(Self.profile()), zone: Self.berlin, tally: .none, at: now)
        #expect(decision.deferred.map(\.key) == [ordinary.key])
        #expect(decision.deferred.first?.until == Self.instant("2027-03-01T06:00:00Z"))  // 07:00 in Berlin
        #expect(decision.deferred.first?.reason == "quietHours")
        #expect(decision.perform == [critical])
        #expect(decision.sendBefore == nil)
    }

    @Test("An alert is not started within the guard before quiet hours")
    func guardBeforeQuietHours() {
        let now = Self.instant("2027-03-01T20:59:00Z")  // 21:59 in Berlin
        let decision = ClaimTimePolicy.decide(
            rows: [Self.alert("a", at: now - 3_600)], rules: .init(Self.profile()), zone: Self.berlin, tally: .none,
            at: now,
            guardSeconds: 120)
        #expect(decision.perform.isEmpty)
        #expect(decision.deferred.first?.until == Self.instant("2027-03-02T06:00:00Z"))
    }

    @Test("Quiet hours that wrap midnight are found on both sides of it, at a 45-minute offset")
    func wrapsMidnightAtOddOffset() {
        let chatham = ZoneRules(identifier: "Pacific/Chatham")!  // +13:45 in March
        let profile = Self.profile(zone: "Pacific/Chatham", quiet: (23 * 60, 6 * 60 + 30))
        let beforeMidnight = Self.instant("2027-03-01T09:30:00Z")  // 23:15 local
        let afterMidnight = Self.instant("2027-03-01T11:00:00Z")  // 00:45 local
        for now in [beforeMidnight, afterMidnight] {
            let decision = ClaimTimePolicy.decide(
                rows: [Self.alert("a", at: now - 3_600)], rules: .init(profile), zone: chatham, tally: .none, at: now)
            #expect(decision.deferred.first?.until == Self.instant("2027-03-01T16:45:00Z"))  // 06:30 local
        }
    }

    @Test("The daily cap defers to the next local day, the hourly one to the next local hour")
    func capsDefer() {
        let now = Self.instant("2027-03-01T11:20:00Z")  // 12:20 in Berlin
        let local = Self.berlin.localDateTime(at: now)
        let full = AlertTally.none.adding(oneAt: local).adding(oneAt: local)
        let daily = ClaimTimePolicy.decide(
            rows: [Self.alert("a", at: now - 3_600)], rules: .init(Self.profile(maxPerDay: 2)), zone: Self.berlin,
            tally: full,
            at: now)
        #expect(daily.deferred.first?.until == Self.instant("2027-03-01T23:00:00Z"))  // local midnight
        #expect(daily.deferred.first?.reason == "maxPerDay")
        let hourly = ClaimTimePolicy.decide(
            rows: [Self.alert("a", at: now - 3_600)], rules: .init(Self.profile(maxPerHour: 2)), zone: Self.berlin,
            tally: full,
            at: now)
        #expect(hourly.deferred.first?.until == Self.instant("2027-03-01T12:00:00Z"))  // 13:00 local
        #expect(hourly.deferred.first?.reason == "maxPerHour")
        let yesterday = ClaimTimePolicy.decide(
            rows: [Self.alert("a", at: now + 86_400 - 3_600)], rules: .init(Self.profile(maxPerDay: 2)),
            zone: Self.berlin,
            tally: full,
            at: now + 86_400)
        #expect(yesterday.deferred.isEmpty)
        #expect(yesterday.tallyAfter?.sentToday == 1)
    }

    @Test("Quiet hours ending on the day of a DST change end at the local wall time")
    func dstChange() {
        // Berlin springs forward on 2027-03-28 at 02:00 (+1 -> +2).
        let now = Self.instant("2027-03-28T02:30:00Z")  // 04:30 CEST
        let decision = ClaimTimePolicy.decide(
            rows: [Self.alert("a", at: now - 3_600)], rules: .init(Self.profile()), zone: Self.berlin, tally: .none,
            at: now)
        #expect(decision.deferred.first?.until == Self.instant("2027-03-28T05:00:00Z"))  // 07:00 CEST
    }

    @Test("Rows of other channels pass; a user without a profile passes unchanged")
    func otherChannelsAndUnknownUsers() {
        let now = Self.instant("2027-03-01T02:00:00Z")
        let sync = OutboxRow(
            key: "k-sync", userID: "u1", requestID: "sync", dueAt: now, payload: .sync
        )
        let alert = Self.alert("a", at: now - 3_600)
        let decision = ClaimTimePolicy.decide(
            rows: [sync, alert], rules: .init(Self.profile()), zone: Self.berlin, tally: .none, at: now)
        #expect(decision.perform == [sync])
        #expect(decision.deferred.count == 1)
        let unknown = ClaimTimePolicy.decide(rows: [sync, alert], rules: nil, zone: nil, tally: .none, at: now)
        #expect(unknown.perform == [sync, alert])
        #expect(
            ClaimTimePolicy.decide(rows: [], rules: .init(Self.profile()), zone: Self.berlin, tally: .none, at: now)
                .perform.isEmpty)
    }
}

/// `OutboxClaim`: the claim every shell makes over several users' rows.
@Suite("OutboxClaim")
struct OutboxClaimTests {
    typealias Policy = ClaimTimePolicyTests

    @Test("A deferred alert is recorded with the instant it was first due; other users' rows pass as listed")
    func aDeferralIsRecorded() {
        let now = Policy.instant("2027-03-01T02:00:00Z")  // 03:00 in Berlin: quiet hours
        let late = Policy.alert("a", at: now - 3_600)
        var other = Policy.alert("b", at: now - 3_600)
        other.userID = "u2"
        let outcome = OutboxClaim.decide(
            [late, other], rules: ["u1": .init(Policy.profile())], unreadable: [],
            zone: { ZoneRules(identifier: $0) }, state: ClaimState(plannedAt: [late.key: now - 7_200]), at: now)
        #expect(
            outcome.record.deferrals == [
                OutboxDeferral(
                    key: late.key, until: Policy.instant("2027-03-01T06:00:00Z"), reason: "quietHours",
                    firstDueAt: now - 7_200)
            ])
        #expect(outcome.perform == [other])  // u2 has no profile: passed unchanged
        #expect(outcome.record.performedKeys == [other.key])
    }

    @Test("A user whose profile cannot be read has their alerts held an hour and the rest performed")
    func anUnreadableProfileHoldsAlertsOnly() {
        let now = Policy.instant("2027-03-01T11:00:00Z")
        let alert = Policy.alert("a", at: now)
        let sync = OutboxRow(
            key: "k-sync", userID: "u1", requestID: "sync", dueAt: now, payload: .sync)
        let outcome = OutboxClaim.decide(
            [alert, sync], rules: [:], unreadable: ["u1"], zone: { ZoneRules(identifier: $0) },
            state: ClaimState(plannedAt: [alert.key: now - 7_200]), at: now)
        #expect(outcome.perform == [sync])
        #expect(
            outcome.record.deferrals == [
                OutboxDeferral(key: alert.key, until: now + 3_600, reason: "unreadableProfile", firstDueAt: now - 7_200)
            ])
    }

    @Test("Expired alerts are in the claim's record, apart from what is performed")
    func expiredAlertsAreRecorded() {
        let now = Policy.instant("2027-03-01T11:00:00Z")
        let stale = Policy.alert("w", at: now - 3_600, kind: .workoutReminder)
        let inbox = OutboxRow(
            key: "k-inbox", userID: "u1", requestID: "w", dueAt: now - 3_600,
            payload: .inboxItem(stale.payload.notification!, shownBy: .remote))
        let outcome = OutboxClaim.decide(
            [inbox, stale], rules: ["u1": .init(Policy.profile())], unreadable: [],
            zone: { ZoneRules(identifier: $0) }, state: ClaimState(), at: now)
        #expect(outcome.record.expiredKeys == [stale.key])
        #expect(outcome.perform == [inbox])  // the inbox keeps it
        #expect(outcome.record.performedKeys == [inbox.key])
    }

    @Test("Rows deferred to one instant keep the order they were planned in")
    func deferredRowsKeepTheirPlannedOrder() throws {
        let now = Policy.instant("2027-03-01T11:00:00Z")
        let rows = [Policy.alert("x", at: now), Policy.alert("y", at: now)].sorted { $0.key > $1.key }
        let state = ClaimState(plannedAt: [rows[0].key: now - 7_200, rows[1].key: now - 3_600])
        let outcome = OutboxClaim.decide(
            rows.reversed(), rules: ["u1": .init(Policy.profile())], unreadable: [],
            zone: { ZoneRules(identifier: $0) }, state: state, at: now)
        let merge = try #require(outcome.record.merges.first)
        #expect(merge.replacedKeys == rows.map(\.key))  // first planned first, whatever the keys
    }
}
