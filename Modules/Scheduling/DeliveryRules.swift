public import Models

/// One occurrence the engine would like to send.
public struct Candidate: Hashable, Sendable {
    /// The occurrence; its request identifier derives from it.
    public var id: OccurrenceID
    public var kind: NotificationKind
    public var plannedAt: Instant
    public var level: InterruptionLevel
    public var policy: KindPolicy
    /// Changes when the content changes (a batch gained an item), so the request is replaced.
    public var revision: Int
    /// The end of the occurrence's slot window (`SlotWindow`), which no rule moves it to or
    /// past; nil: its staleness alone bounds it.
    public var windowEnd: Instant?
    /// Why `plannedAt` is not the slot's nominal time (a learned shift, the local night, a
    /// snooze, a change of zone); nil when it is.
    public var retiming: Retiming?
    /// A digest of grouped items: the attention budget counts it but never cuts it (its cuts
    /// go there; see `AttentionBudget`).
    public var isDigest: Bool

    public init(
        id: OccurrenceID, kind: NotificationKind, plannedAt: Instant, level: InterruptionLevel, policy: KindPolicy,
        revision: Int = 0, windowEnd: Instant? = nil, retiming: Retiming? = nil, isDigest: Bool = false
    ) {
        self.isDigest = isDigest
        self.revision = revision
        self.id = id
        self.kind = kind
        self.plannedAt = plannedAt
        self.level = level
        self.policy = policy
        self.windowEnd = windowEnd
        self.retiming = retiming
    }
}

/// Why a candidate is planned away from its slot's nominal time, as a value the trace renders.
public struct Retiming: Hashable, Sendable {
    /// `learnedShift`, `localNight`, `snoozed` or `timeZoneChanged`.
    public var reason: ReasonCode
    /// The time it would have had; nil when there is no other time to name (a snoozed copy).
    public var nominalAt: Instant?

    public init(_ reason: ReasonCode, nominalAt: Instant?) {
        self.reason = reason
        self.nominalAt = nominalAt
    }
}

/// The fire times a user has had and will have, for rolling caps. Sorted, small (about a day
/// and a half of notifications), answered by binary search.
public struct CapLedger: Hashable, Sendable {
    public private(set) var instants: [Int64] = []

    public init(_ instants: [Instant] = []) { self.instants = instants.map(\.secondsSinceEpoch).sorted() }

    public var count: Int { instants.count }

    /// Index of the first entry greater than `seconds`.
    func upperBound(_ seconds: Int64) -> Int {
        var low = 0
        var high = instants.count
        while low < high {
            let middle = (low + high) >> 1
            if instants[middle] <= seconds { low = middle + 1 } else { high = middle }
        }
        return low
    }

    public mutating func insert(_ instant: Instant) {
        instants.insert(instant.secondsSinceEpoch, at: upperBound(instant.secondsSinceEpoch))
    }

    /// Removes one entry at `instant`, if there is one.
    public mutating func remove(_ instant: Instant) {
        let end = upperBound(instant.secondsSinceEpoch)
        if end > 0 && instants[end - 1] == instant.secondsSinceEpoch { instants.remove(at: end - 1) }
    }

    /// Drops entries before `instant`.
    public mutating func prune(before instant: Instant) {
        let keep = upperBound(instant.secondsSinceEpoch - 1)
        if keep > 0 { instants.removeFirst(keep) }
    }

    /// Entries in `start ..< end`.
    public func count(from start: Instant, to end: Instant) -> Int {
        upperBound(end.secondsSinceEpoch - 1) - upperBound(start.secondsSinceEpoch - 1)
    }

    /// The earliest time at or after `instant` at which one more entry keeps every 60-minute
    /// window, `(x - 3600, x]`, at no more than `cap` entries; nil if none within `limit`.
    ///
    /// The search jumps: past a crowd of earlier entries to an hour after the first of them
    /// (exact), past a crowd of later entries to one minute after the last of them. When
    /// `instant` and the entries are whole minutes, as planned fire times mostly are, the answer
    /// is the earliest fitting minute. With an entry off the minute (a candidate already due goes
    /// out a second after `now`), it may lie up to 59 seconds after the earliest second that
    /// fits. Pure: the same entries give the same answer, whether they were planned or fired.
    public func earliestWithinHourlyCap(from instant: Instant, cap: Int, limit: Instant) -> Instant? {
        var t = instant.secondsSinceEpoch
        for _ in 0..<256 {
            guard t <= limit.secondsSinceEpoch else { return nil }
            // A crowd of `cap` entries that, with t, fit in an hour lies inside (t - 1 h, t + 1 h):
            // with fewer there, t is free (the usual answer, in two searches).
            if t > Int64.min + .secondsPerHour, t < Int64.max - .secondsPerHour,
                upperBound(t + .secondsPerHour - 1) - upperBound(t - .secondsPerHour) < cap
            {
                return Instant(secondsSinceEpoch: t)
            }
            let k = upperBound(t)
            var next: Int64? = nil
            // Any cap + 1 consecutive entries including t must span at least an hour.
            for before in 0...cap {
                let after = cap - before
                guard k - before >= 0, k + after - 1 < instants.count || after == 0 else { continue }
                let first = before > 0 ? instants[k - before] : t
                let last = after > 0 ? instants[k + after - 1] : t
                if last - first < .secondsPerHour {
                    // Moving later clears windows that start before t; otherwise step past the crowd.
                    let candidate = before > 0 ? first + .secondsPerHour : last + .secondsPerMinute
                    next = max(next ?? candidate, candidate)
                }
            }
            guard let later = next else { return Instant(secondsSinceEpoch: t) }
            t = later
        }
        return nil
    }
}

/// The outcome of the delivery rules for one candidate.
public enum RuleOutcome: Hashable, Sendable {
    /// Send at `fireAt`; `reason` is `.onTime`, or the rule that moved it later.
    case send(fireAt: Instant, reason: ReasonCode)
    /// Do not send; `reason` is the rule that blocked it.
    case drop(reason: ReasonCode)
    /// Do not send alone: fold it into the kind's digest; `reason` is the rule that blocked it.
    case fold(reason: ReasonCode)
}

/// Quiet hours, the hourly cap and the daily cap, applied to one candidate against the ledger
/// of what is already sent or planned. Pure: the same inputs give the same outcome.
public enum DeliveryRules {
    /// Applies, in order, quiet hours (only critical breaks through), the user being in the app
    /// (non-urgent kinds wait until the session ends), the daily cap and the rolling hourly cap
    /// (transactional kinds are exempt). When a rule blocks the planned time, the kind's deferral
    /// policy decides: wait (until the staleness deadline), drop, or fold into the digest.
    ///
    /// Nothing is sent at or before `now`: a candidate already due is considered from `now + 1`,
    /// still against its own deadline (`plannedAt + stalenessSeconds`, at least that moment).
    /// Nothing is sent at or after the end of its slot's window (`Candidate.windowEnd`): a
    /// candidate whose window has passed is dropped (`slotWindowPassed`), and one a rule would
    /// hold past it is dropped with that rule's reason.
    public static func evaluate(
        _ candidate: Candidate, at now: Instant, preferences: NotificationPreferences, zone: ZoneRules,
        ledger: CapLedger, activeUntil: Instant? = nil
    ) -> RuleOutcome {
        var t = max(candidate.plannedAt, now + 1)
        var deadline = max(t, candidate.plannedAt + candidate.policy.stalenessSeconds)
        if let windowEnd = candidate.windowEnd {
            guard t < windowEnd else { return .drop(reason: .slotWindowPassed) }
            deadline = min(deadline, windowEnd - 1)
        }
        let exempt = candidate.kind.isTransactional
        let urgent = exempt || candidate.level >= .timeSensitive
        var reason = ReasonCode.onTime
        /// A rule blocked `t`: the policy decides whether to look further.
        func blocked(by rule: ReasonCode) -> RuleOutcome? {
            if reason == .onTime { reason = rule }
            switch candidate.policy.deferral {
            case .deferUntilAllowed: return nil
            case .drop: return .drop(reason: rule)
            case .foldIntoDigest: return .fold(reason: rule)
            }
        }
        for _ in 0..<16 {
            let local = zone.localDateTime(at: t)
            if let quiet = preferences.quietHours, !candidate.level.breaksThroughQuietHours,
                let end = quiet.endOfWindow(containing: local)
            {
                if let outcome = blocked(by: .quietHours) { return outcome }
                var opensAt = zone.instant(for: end)
                // In the second pass of a repeated (fall-back) hour the first occurrence of the
                // end is already past: wait out the remaining wall-clock time instead.
                if opensAt <= t { opensAt = t + (end.localSeconds - local.localSeconds) }
                guard opensAt <= deadline else { return .drop(reason: .quietHours) }
                t = opensAt
                continue
            }
            if !urgent, let activeUntil, t < activeUntil {
                if let outcome = blocked(by: .userActiveInApp) { return outcome }
                guard activeUntil <= deadline else { return .drop(reason: .userActiveInApp) }
                t = activeUntil
                continue
            }
            if exempt { return .send(fireAt: t, reason: reason == .onTime ? .capExemptTransactional : reason) }
            if let dayCap = preferences.maxPerDay {
                let day = local.daysSinceEpoch
                let dayStart = zone.instant(for: LocalDateTime(localSeconds: day * .secondsPerDay))
                let dayEnd = zone.instant(for: LocalDateTime(localSeconds: (day + 1) * .secondsPerDay))
                if ledger.count(from: dayStart, to: dayEnd) >= dayCap {
                    return candidate.policy.deferral == .foldIntoDigest
                        ? .fold(reason: .capPerDay) : .drop(reason: .capPerDay)
                }
            }
            guard let allowed = ledger.earliestWithinHourlyCap(from: t, cap: preferences.maxPerHour, limit: deadline)
            else { return blocked(by: .capPerHour) ?? .drop(reason: .capPerHour) }
            if allowed != t {
                if let outcome = blocked(by: .capPerHour) { return outcome }
                t = allowed
                continue
            }
            return .send(fireAt: t, reason: reason)
        }
        return .drop(reason: .stale)
    }
}
