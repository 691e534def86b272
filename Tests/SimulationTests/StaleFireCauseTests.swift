import Models
import Runtime
import Testing

@testable import Simulation

/// A stale fire's cause, read from what the phone could hear between the change and the fire.
@Suite struct StaleFireCauseTests {
    /// A change on a slot's boundary: its sync is due at the next slot, sent within the grace,
    /// and handed to the app within the delivery window (`SilentPushPlan.phoneHears`); the
    /// first test holds `hears` to the plan.
    let changedAt = Instant(secondsSinceEpoch: 1_830 * 1_000_000)
    var hears: Instant { changedAt + 2_790 }

    func cause(offlineSince: Instant? = nil, changed: Instant?? = .none, firedAt: Instant) -> StaleFireCause {
        StaleFireCause(
            clockOff: false, movedOffline: false, offlineSince: offlineSince, changedAt: changed ?? changedAt,
            firedAt: firedAt)
    }

    @Test func theSyncSlotBoundsWhatAnOnlinePhoneCouldNotYetHear() {
        #expect(RemoteChannel.silentPushes.phoneHears(ofChangeAt: changedAt) == hears)
        #expect(cause(firedAt: changedAt + 60) == .beforeTheSync)
        #expect(cause(firedAt: hears) == .beforeTheSync)
        #expect(cause(firedAt: hears + 1) == .syncLost)
    }

    @Test func anOfflineSpellIsThroughoutFromTheChangeOrBeforeHearingUntilTheSyncWasDue() {
        let fired = hears + 3_600
        #expect(cause(offlineSince: changedAt - 10, firedAt: fired) == .offlineThroughout)
        #expect(cause(offlineSince: changedAt, firedAt: fired) == .offlineThroughout)
        #expect(cause(offlineSince: changedAt + 1, firedAt: fired) == .offlineBeforeHearing)
        #expect(cause(offlineSince: hears, firedAt: fired) == .offlineBeforeHearing)
        // Online when the sync was due, and no pull came: the sync was lost.
        #expect(cause(offlineSince: hears + 1, firedAt: fired) == .syncLost)
    }

    @Test func aChangeOfUnknownTimeIsSaidToBeUnknown() {
        #expect(cause(offlineSince: changedAt, changed: .some(nil), firedAt: hears) == .changeUnknown)
        #expect(cause(changed: .some(nil), firedAt: hears) == .changeUnknown)
        #expect(!StaleFireCause.changeUnknown.phoneCouldHear)
    }

    @Test func theClockAndAnUnheardMoveComeFirst() {
        let offline = changedAt - 10
        #expect(
            StaleFireCause(
                clockOff: true, movedOffline: true, offlineSince: offline, changedAt: changedAt, firedAt: hears)
                == .clockOff)
        #expect(
            StaleFireCause(
                clockOff: false, movedOffline: true, offlineSince: offline, changedAt: changedAt, firedAt: hears)
                == .movedOffline)
    }

    @Test func onlyTheCausesWithTheSyncWithinReachCountTowardTheAgeAPhoneCouldHear() {
        let heard = StaleFireCause.allCases.filter(\.phoneCouldHear)
        #expect(Set(heard) == [.beforeTheSync, .syncLost, .clockOff])
    }

    /// A broken promise, every excusing fact present: each test takes one away.
    func broken(_ invariant: Invariant, _ change: (inout BrokenDelivery) -> Void = { _ in }) -> UnavoidableCause? {
        var broken = BrokenDelivery(
            invariant: invariant, isLocalCopy: true, staleCause: .offlineThroughout, moveUnheard: true,
            keptInTheServersZone: true, settingChangedSincePull: true)
        change(&broken)
        return UnavoidableCause(broken)
    }

    @Test func aMoveUnheardExcusesTheNightAndQuietHoursOnlyWhereTheServersZoneKeptThem() {
        let push: (inout BrokenDelivery) -> Void = {
            $0.isLocalCopy = false; $0.staleCause = nil
        }
        #expect(broken(.noNudgeInLocalNight, push) == .zoneMovedOffline)
        #expect(broken(.noDeliveryInQuietHours, push) == .zoneMovedOffline)
        #expect(
            broken(.noNudgeInLocalNight) {
                push(&$0); $0.keptInTheServersZone = false
            } == nil)
        #expect(
            broken(.noNudgeInLocalNight) {
                push(&$0); $0.moveUnheard = false
            } == nil)
        // Caps and slots are not read from one instant: a move never excuses them.
        #expect(broken(.perDayCapHeld, push) == nil)
        #expect(broken(.deliveryInsideSlotWindow, push) == nil)
    }

    @Test func aSettingChangedElsewhereExcusesOnlyACopyWhosePhoneWasOfflineFromTheChange() {
        let noMove: (inout BrokenDelivery) -> Void = { $0.moveUnheard = false }
        #expect(broken(.disabledKindNeverDelivered, noMove) == .changedWhileOffline)
        #expect(broken(.noReEngagementForGiveMeSpace, noMove) == .changedWhileOffline)
        #expect(
            broken(.noDeliveryInQuietHours) {
                noMove(&$0); $0.keptInTheServersZone = false
            } == .changedWhileOffline)
        for cause in StaleFireCause.allCases where cause != .offlineThroughout {
            #expect(
                broken(.disabledKindNeverDelivered) {
                    noMove(&$0); $0.staleCause = cause
                } == nil, "\(cause)")
        }
        #expect(
            broken(.disabledKindNeverDelivered) {
                noMove(&$0); $0.settingChangedSincePull = false
            } == nil)
        #expect(
            broken(.disabledKindNeverDelivered) {
                noMove(&$0); $0.isLocalCopy = false
            } == nil)
        #expect(
            broken(.disabledKindNeverDelivered) {
                noMove(&$0); $0.staleCause = nil
            } == nil)
    }

    @Test func aMoveNeverExcusesARuleOfTheUsersWishAndADeedIsNeverExcused() {
        // A disabled kind broken by a copy stale for another reason, while a move waits: a violation.
        #expect(broken(.disabledKindNeverDelivered) { $0.staleCause = .movedOffline } == nil)
        #expect(broken(.noReminderForDoneThing) == nil)
        #expect(broken(.perHourCapHeld) == nil)
        #expect(broken(.noDuplicateDelivery) == nil)
    }

    @Test func theServersZoneKeepsQuietHoursAndTheNightByTheLocalTimeAlone() throws {
        var preferences = NotificationPreferences()
        preferences.quietHours = try QuietHours(start: LocalTimeOfDay("22:00")!, end: LocalTimeOfDay("07:00")!)
        let morning = LocalDateTime(localSeconds: 10 * 3_600)
        let night = LocalDateTime(localSeconds: 23 * 3_600 + 45 * 60)
        #expect(Shard.keeps(.noDeliveryInQuietHours, preferences, at: morning))
        #expect(!Shard.keeps(.noDeliveryInQuietHours, preferences, at: night))
        #expect(Shard.keeps(.noNudgeInLocalNight, preferences, at: morning))
        #expect(!Shard.keeps(.noNudgeInLocalNight, preferences, at: night))
        #expect(!Shard.keeps(.perDayCapHeld, preferences, at: morning))
    }
}
