import Models
import Runtime
import Testing

@testable import Simulation

/// A stale fire's cause, read from what the phone could hear between the change and the fire.
@Suite struct StaleFireCauseTests {
    /// A change on a slot's boundary: its sync is due at the next slot (1,830 s on), sent within
    /// a minute of it, and handed to the app within a quarter of an hour: 2,790 s on.
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

    @Test func aChangeOfUnknownTimeIsOfflineThroughoutOrALostSync() {
        #expect(cause(offlineSince: changedAt, changed: .some(nil), firedAt: hears) == .offlineThroughout)
        #expect(cause(changed: .some(nil), firedAt: hears) == .syncLost)
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

    @Test func aMoveUnheardExcusesOnlyRulesOfLocalTimeAndAStaleCopyOnlyRulesOfTheUsersWish() {
        #expect(Invariant.noNudgeInLocalNight.isJudgedOnLocalTime)
        #expect(Invariant.noDeliveryInQuietHours.isJudgedOnLocalTime)
        #expect(!Invariant.perHourCapHeld.isJudgedOnLocalTime)
        #expect(!Invariant.noDuplicateDelivery.isJudgedOnLocalTime)
        #expect(Invariant.noReminderForDoneThing.isRuledByTheUsersWish)
        #expect(Invariant.disabledKindNeverDelivered.isRuledByTheUsersWish)
        #expect(!Invariant.perDayCapHeld.isRuledByTheUsersWish)
        #expect(!Invariant.badgeEqualsUnread.isRuledByTheUsersWish)
    }
}
