public import Delivery
public import Models

/// A setting the user changed in the app, which the app's backend writes to the server. Until
/// the server plans again and the phone pulls, the phone withdraws at once what the new setting
/// rules out (`PlanSync.withdraw(ruledOutBy:zone:from:)`), as the engine would.
public enum SettingChange: Hashable, Sendable {
    /// Notifications turned off in the app: every request the kit placed.
    case notificationsOff
    /// These kinds turned off.
    case kindsDisabled(Set<NotificationKind>)
    /// New quiet hours: what fires inside them, unless its level breaks through (critical only).
    case quietHours(QuietHours)
    /// "Give me space": no re-engagement, ever.
    case giveMeSpace

    /// Whether the setting rules out `pending`, which fires next at its `nextFire`, read in
    /// `zone` (the zone the plan's calendar triggers match in).
    func rulesOut(_ pending: PendingNotification, in zone: ZoneRules) -> Bool {
        let content = pending.request.content
        switch self {
        case .notificationsOff: return true
        case .kindsDisabled(let kinds): return kinds.contains(content.kind)
        case .quietHours(let quiet):
            return !content.interruptionLevel.breaksThroughQuietHours
                && quiet.contains(zone.localDateTime(at: pending.nextFire))
        case .giveMeSpace: return content.kind == .reEngagement
        }
    }
}

extension PlanSync {
    /// The user changed a setting in the app (`change`): withdraws at once, from `center`, every
    /// request the kit placed that it rules out, read in `zone` (the user's zone). Call it when
    /// the app's user changes the setting, before or beside the app's backend writing it to the
    /// server. The plan's version is forgotten, so the next signal or refresh pulls the plan the
    /// server made with the new setting; a plan pulled before the server has it places the
    /// requests again, as the server still plans them. Returns the identifiers withdrawn, sorted.
    @discardableResult
    public mutating func withdraw<Center: LocalNotificationCenter>(
        ruledOutBy change: SettingChange, zone: ZoneRules, from center: inout Center
    ) -> [RequestID] {
        let moot = center.pendingNotificationRequests.filter { pending in
            state.owned.contains(pending.request.identifier) && change.rulesOut(pending, in: zone)
        }.map(\.request.identifier).sorted()
        guard !moot.isEmpty else { return [] }
        center.removePendingNotificationRequests(withIdentifiers: moot)
        forgetWithdrawn(moot)
        forgetVersion()
        return moot
    }
}
