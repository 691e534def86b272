import Engagement
import Models
import Runtime
import Scheduling
import SimulatedPlatform

/// Why a local notification fired though the server's plan no longer held it (a stale fire),
/// read from what the phone could hear between the plan's change and the fire. The report
/// counts each (`DeploymentFigures.staleFiresByCause`), so a reader sees which a design could
/// still shorten and which no design can.
enum StaleFireCause: String, CaseIterable, Sendable {
    /// The device had no network from before the change until the fire: nothing could reach it.
    case offlineThroughout
    /// The device lost its network after the change, before the sync of it could reach it
    /// (`SilentPushPlan.phoneHears`), and had none when its copy fired.
    case offlineBeforeHearing
    /// Online, fired before the sync of the change could reach it (`SilentPushPlan.phoneHears`):
    /// a request the phone held then, withdrawn by the user's wish or deed heard elsewhere.
    case beforeTheSync
    /// Fired after the sync of the change should have reached the phone while it was online:
    /// APNs or iOS delayed or dropped the sync (an outage, a throttled background push), and no
    /// pull came since.
    case syncLost
    /// The device's clock is off: the app holds a daily series one occurrence at a time, from
    /// the plan it pulled last (`DeviceClock`).
    case clockOff
    /// The phone moved to another zone while offline: it fires its calendar copies at the same
    /// wall time there, while the server, not yet told, holds the old zone's instants.
    case movedOffline

    /// Whether the phone could have heard of the change before the fire: online when its sync
    /// was due.
    var phoneCouldHear: Bool {
        switch self {
        case .beforeTheSync, .syncLost, .clockOff: true
        case .offlineThroughout, .offlineBeforeHearing, .movedOffline: false
        }
    }
}

extension StaleFireCause {
    /// The cause of a copy fired at `firedAt`, changed by the server's plan at `changedAt` (nil:
    /// not known), in this order:
    /// - `clockOff` while the device's clock is off, `movedOffline` while the kit queues a move;
    /// - offline at the fire (`offlineSince`): `offlineThroughout` when the spell began by the
    ///   change, `offlineBeforeHearing` when it began before the change's sync could reach the
    ///   phone (`SilentPushPlan.phoneHears`), `syncLost` when after;
    /// - online: `beforeTheSync` by that time, `syncLost` after it.
    init(clockOff: Bool, movedOffline: Bool, offlineSince: Instant?, changedAt: Instant?, firedAt: Instant) {
        if clockOff {
            self = .clockOff
        } else if movedOffline {
            self = .movedOffline
        } else if let changedAt {
            let hears = RemoteChannel.silentPushes.phoneHears(ofChangeAt: changedAt)
            if let offlineSince {
                self =
                    offlineSince <= changedAt
                    ? .offlineThroughout : offlineSince <= hears ? .offlineBeforeHearing : .syncLost
            } else {
                self = firedAt <= hears ? .beforeTheSync : .syncLost
            }
        } else {
            self = offlineSince == nil ? .syncLost : .offlineThroughout
        }
    }
}

extension StaleFireCause: Tallied {
    var position: Int { Self.allCases.firstIndex(of: self)! }
    var reportKey: String { rawValue }
}

/// Why a broken promise is one no design could have kept: the server could not know what the
/// phone knew, and the phone could not hear what the server knew. Such a delivery is counted
/// apart with its cause (`DeploymentFigures.unavoidableByCause`), never as a violation, and
/// never hidden: the summary and the journal name each.
enum UnavoidableCause: String, CaseIterable, Sendable {
    /// The phone moved to another zone while offline: the server timed a push by the local time
    /// of the zone it knew, and the move waited in the kit's queue.
    case zoneMovedOffline
    /// The plan changed (a setting or an activity the server heard of from elsewhere) while the
    /// phone was offline, or just before it lost its network, before the sync could reach it;
    /// it stayed offline until its copy fired (`StaleFireCause.offlineThroughout`,
    /// `offlineBeforeHearing`).
    case changedWhileOffline
}

extension UnavoidableCause: Tallied {
    var position: Int { Self.allCases.firstIndex(of: self)! }
    var reportKey: String { rawValue }
}

extension Invariant {
    /// Judged by the user's local time: a move the server has not heard of breaks it.
    var isJudgedOnLocalTime: Bool {
        switch self {
        case .noDeliveryInQuietHours, .perDayCapHeld, .morningGreetingOncePerLocalDay, .deliveryInsideSlotWindow,
            .noNudgeInLocalNight:
            true
        default: false
        }
    }

    /// Broken by a copy the phone holds when the user's wish or deed changed elsewhere: a kind
    /// disabled, new quiet hours, give-me-space, the thing done.
    var isRuledByTheUsersWish: Bool {
        switch self {
        case .noDeliveryInQuietHours, .disabledKindNeverDelivered, .noReEngagementForGiveMeSpace,
            .noReminderForDoneThing:
            true
        default: false
        }
    }
}

extension Shard {
    /// Why a copy fired at true time `instant` was stale, its request changed by the server's
    /// plan at `changedAt` (nil: not known).
    func staleFireCause(_ local: Int, changedAt: Int64?, at instant: Instant) -> StaleFireCause {
        StaleFireCause(
            clockOff: users[local].clockOffsetSeconds != 0,
            movedOffline: users[local].phone.queuedEvents.contains(where: \.isZoneChange),
            offlineSince: users[local].remote.device.offlineSince(at: instant),
            changedAt: changedAt.map(Instant.init(secondsSinceEpoch:)), firedAt: instant)
    }

    /// Why `violation`, broken by the delivery of `request` at `instant`, could not have been
    /// avoided, or nil when it could: only in the server topology, for
    /// - a rule of local time, while the kit still queues a move the server has not heard of;
    /// - a rule of the user's wish, broken by a stale local copy whose phone could not hear of
    ///   the plan's change before it fired.
    func unavoidableCause(
        of violation: Invariant, _ local: Int, _ request: NotificationRequest, at instant: Instant
    ) -> UnavoidableCause? {
        guard isServerDeployment else { return nil }
        let phone = users[local].phone
        if violation.isJudgedOnLocalTime, phone.queuedEvents.contains(where: \.isZoneChange) {
            return .zoneMovedOffline
        }
        guard violation.isRuledByTheUsersWish, ChannelPolicy.channel(for: request.content.kind) == .local,
            !phone.holds(request, firedAt: instant)
        else { return nil }
        guard let changedAt = phone.changedAt[request.identifier] else { return nil }
        switch staleFireCause(local, changedAt: changedAt, at: instant) {
        case .offlineThroughout, .offlineBeforeHearing: return .changedWhileOffline
        case .movedOffline: return .zoneMovedOffline
        case .beforeTheSync, .syncLost, .clockOff: return nil
        }
    }
}

extension EngineInput {
    /// A move to another zone (`timeZoneChanged`).
    fileprivate var isZoneChange: Bool {
        if case .timeZoneChanged = self { return true }
        return false
    }
}
