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
    /// a copy due so soon is committed, so only a change of the user's own wish or deed moves it.
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
    /// When the plan changed is not known: the server's plan never held the copy, or its change
    /// is more than four days old (`PhonePlan.forget`).
    case changeUnknown

    /// Whether the phone could have heard of the change before the fire: online when its sync
    /// was due.
    var phoneCouldHear: Bool {
        switch self {
        case .beforeTheSync, .syncLost, .clockOff: true
        case .offlineThroughout, .offlineBeforeHearing, .movedOffline, .changeUnknown: false
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
    /// - online: `beforeTheSync` by that time, `syncLost` after it;
    /// - `changeUnknown` without a change's time.
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
            self = .changeUnknown
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
/// never hidden: the summary and the journal name each. Each cause is read strictly
/// (`init(_:)`): anything a design could still have kept stays a violation.
enum UnavoidableCause: String, CaseIterable, Sendable {
    /// The phone moved to another zone while offline: the server timed the delivery by the
    /// local time of the zone it knew, where it kept the rule, and the move waited in the kit's
    /// queue.
    case zoneMovedOffline
    /// A setting changed elsewhere (the app's backend, another device) ruled a copy out after
    /// the phone's last pull, and the phone had no network from that change until the copy
    /// fired (`StaleFireCause.offlineThroughout`).
    case changedWhileOffline
}

/// The facts of one broken promise that decide whether any design could have kept it.
struct BrokenDelivery {
    var invariant: Invariant
    /// A copy the phone held and fired itself, not a push.
    var isLocalCopy: Bool
    /// Why the server's plan no longer held the copy as it fired; nil when it held it (or for a
    /// push).
    var staleCause: StaleFireCause?
    /// The kit queues a move the server has not heard of.
    var moveUnheard: Bool
    /// The rule holds at the delivery's instant in the zone the server knew.
    var keptInTheServersZone: Bool
    /// A setting changed since the phone's last pull rules the copy out (`Shard.settingChanges`).
    var settingChangedSincePull: Bool
}

extension UnavoidableCause {
    /// The cause of `broken`, or nil when a design could have kept the promise:
    /// - `zoneMovedOffline`: quiet hours or the local night, broken while the kit queues a move,
    ///   by a delivery that kept the rule in the zone the server knew;
    /// - `changedWhileOffline`: quiet hours, a disabled kind or give-me-space, broken by a stale
    ///   copy whose phone was offline from the change, when a setting changed since its last
    ///   pull. A thing done is never excused: every deed reaches the server through the phone,
    ///   whose kit withdraws the copy at once.
    init?(_ broken: BrokenDelivery) {
        if broken.invariant.isJudgedOnLocalTime, broken.moveUnheard, broken.keptInTheServersZone {
            self = .zoneMovedOffline
        } else if broken.invariant.isRuledBySettings, broken.isLocalCopy, broken.staleCause == .offlineThroughout,
            broken.settingChangedSincePull
        {
            self = .changedWhileOffline
        } else {
            return nil
        }
    }
}

extension UnavoidableCause: Tallied {
    var position: Int { Self.allCases.firstIndex(of: self)! }
    var reportKey: String { rawValue }
}

extension Invariant {
    /// Judged by the local time of the user's zone alone: a move the server has not heard of
    /// breaks it, and whether the server's zone kept it can be asked at the instant.
    var isJudgedOnLocalTime: Bool { self == .noDeliveryInQuietHours || self == .noNudgeInLocalNight }

    /// Broken by a copy the phone holds when a setting changes: new quiet hours, a kind
    /// disabled, give-me-space.
    var isRuledBySettings: Bool {
        switch self {
        case .noDeliveryInQuietHours, .disabledKindNeverDelivered, .noReEngagementForGiveMeSpace: true
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
    /// avoided (`UnavoidableCause.init`), or nil when it could. Only in the server topology.
    func unavoidableCause(
        of violation: Invariant, _ local: Int, _ request: NotificationRequest, at instant: Instant
    ) -> UnavoidableCause? {
        guard isServerDeployment else { return nil }
        let phone = users[local].phone
        let isLocalCopy = ChannelPolicy.channel(for: request.content.kind) == .local
        let stale = isLocalCopy && !phone.holds(request, firedAt: instant)
        let profile = users[local].engine.profile
        return UnavoidableCause(
            BrokenDelivery(
                invariant: violation, isLocalCopy: isLocalCopy,
                staleCause: stale
                    ? staleFireCause(local, changedAt: phone.changedAt[request.identifier], at: instant) : nil,
                moveUnheard: phone.queuedEvents.contains(where: \.isZoneChange),
                keptInTheServersZone: Self.keeps(
                    violation, profile.preferences, at: users[local].engine.zone.localDateTime(at: instant)),
                settingChangedSincePull: phone.pulledProfile.map {
                    !Self.settingChanges(from: $0, by: .profileChanged(profile)).isEmpty
                } ?? false))
    }

    /// Whether a delivery at local time `local` keeps `invariant` (quiet hours, the local
    /// night) under `preferences`. The night's exception, app opens near that time, is left
    /// out: a nudge at night is never excused.
    static func keeps(_ invariant: Invariant, _ preferences: NotificationPreferences, at local: LocalDateTime) -> Bool {
        switch invariant {
        case .noDeliveryInQuietHours: preferences.quietHours?.endOfWindow(containing: local) == nil
        case .noNudgeInLocalNight: preferences.isWakingTime(local.timeOfDay)
        default: false
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
