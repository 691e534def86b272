import Delivery
import Engagement
import Models

/// The shard's side of fatigue and the attention budget's figures: a delivery tires the user, a
/// draw may make them opt out (through the same input a real app sends), and the budget's groups
/// are counted for the report (`AttentionStats`).
extension Shard {
    /// A delivery adds to the user's load (more at night, outside their waking hours) and to
    /// their budget group's count.
    func tire(_ local: Int, at instant: Instant) {
        stats.attention[heldOut: inPlace(local) { $0.engine.isHeldOutOfBudget }].deliveries += 1
        let model = scenario.fatigue
        guard model.isEnabled else { return }
        let minute = users[local].zone.localDateTime(at: instant).secondOfDay / 60
        let night = !users[local].traits.persona.habits.isAwake(minuteOfDay: minute)
        users[local].fatigue.add(1 + (night ? model.nightWeight : 0), at: instant.secondsSinceEpoch, model: model)
    }

    /// Draws whether the delivery of `kind` was one too many: the user revokes permission in
    /// Settings (for good) or disables the kind through the app's preferences, which reach the
    /// engine as `preferencesChanged`, the input a real app sends.
    func considerOptOut(_ local: Int, of kind: NotificationKind, at now: Instant) throws {
        let model = scenario.fatigue
        guard model.isEnabled, !users[local].optOuts.revoked,
            users[local].absence(at: now.secondsSinceEpoch) == .present
        else { return }
        let strain = users[local].fatigue.strain(at: now.secondsSinceEpoch, model: model)
        guard users[local].generator.chance(model.optOutChance(strain: strain)) else { return }
        if users[local].generator.chance(model.revokeShare) {
            users[local].optOuts.revoked = true
            users[local].notificationsBlocked = true
            users[local].center.setAuthorizationStatus(.denied)
            try journal.log(&users[local], now, "optOut") { $0.id("permission", "denied") }
            // On the server topology the kit reports the change of permission (`DeviceReporter`).
            if isServerDeployment { try step(local, .notificationPermission(allowed: false), at: now) }
            return
        }
        var preferences = inPlace(local) { $0.engine.profile }.preferences
        guard preferences.isEnabled(kind) else { return }
        preferences.settings[kind] = .disabled
        users[local].optOuts.kinds.append(OptOut(kind: kind, disabledAt: now))
        try journal.log(&users[local], now, "optOut") { $0.id("kind", kind.rawValue) }
        try step(local, .preferencesChanged(preferences), at: now)
    }

    /// The user's budget group's user counts, at the end of the run.
    func countAttentionGroup(_ local: Int) {
        let user = users[local]
        let persona = user.traits.persona.position
        var group = stats.attention[heldOut: user.engine.isHeldOutOfBudget]
        group.users += 1
        group.usersByPersona[persona] += 1
        if user.optOuts.any {
            group.optedOutUsers += 1
            group.optedOutByPersona[persona] += 1
        }
        if user.optOuts.revoked { group.revokedUsers += 1 }
        for optOut in user.optOuts.kinds { group.optOutsByKind[optOut.kind] += 1 }
        stats.attention[heldOut: user.engine.isHeldOutOfBudget] = group
    }
}
