public import Models

/// The global control group: a share of users, chosen from their id alone, who receive no
/// re-engagement, so the effect of nudges can be measured (Braze's global control group).
///
/// Contract:
/// - Deterministic and stateless: the answer depends only on the id's UTF-8 bytes, the share
///   and the salt; never on the order users are seen, the process or the platform.
/// - Monotone in the share: a user held out at share `s` is held out at every larger share, so
///   growing the group only adds users to it.
/// - Independent salts give independent groups: change the salt to draw a fresh group.
/// - Over many ids the held-out fraction is `share` within sampling error (the id is hashed
///   with FNV-1a and the hash mixed with the salt by SplitMix64's finaliser before being mapped
///   to [0, 1), so sequential ids such as `user-1`, `user-2` spread evenly).
public enum Holdout {
    /// Whether `userID` is in the control group of the given share (clamped to 0 ... 1).
    @inlinable public static func isHeldOut(userID: UserID, share: Double, salt: UInt64) -> Bool {
        unitValue(userID: userID, salt: salt) < share
    }

    /// The id's position in [0, 1): uniform over ids, fixed for an id and salt.
    public static func unitValue(userID: UserID, salt: UInt64) -> Double {
        var z = FNV1a.hash(userID.rawValue) ^ (salt &* 0x9E37_79B9_7F4A_7C15)
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Double(z >> 11) * 0x1.0p-53
    }
}

/// The lift of re-engagement: the return rate of lapsed users who were nudged against that of
/// lapsed users in the holdout.
///
/// A mergeable accumulator of exact counts (shards and weeks merge in any order with the same
/// result); the rates are derived, nil (null in JSON) when a group is empty. "Returned" is the
/// caller's definition, e.g. active again within 14 days of lapsing; count each lapse once.
public struct ReturnLift: Hashable, Sendable, Codable {
    /// Lapses of users who were eligible for nudges.
    public private(set) var treatedLapses = 0
    public private(set) var treatedReturns = 0
    /// Of `treatedReturns`, those whose first act was answering a nudge (the rest came back on
    /// their own): a part of the returns, never counted beside them.
    public private(set) var treatedReturnsPromptedByNudge = 0
    /// Lapses of held-out users.
    public private(set) var holdoutLapses = 0
    public private(set) var holdoutReturns = 0

    public init() {}

    /// Records one lapse and whether the user came back; `promptedByNudge` when the return was
    /// an answer to a nudge (counted only for a treated return).
    public mutating func record(heldOut: Bool, returned: Bool, promptedByNudge: Bool = false) {
        if heldOut {
            holdoutLapses += 1
            if returned { holdoutReturns += 1 }
        } else {
            treatedLapses += 1
            if returned { treatedReturns += 1 }
            if returned && promptedByNudge { treatedReturnsPromptedByNudge += 1 }
        }
    }

    public mutating func merge(_ other: ReturnLift) {
        treatedLapses += other.treatedLapses
        treatedReturns += other.treatedReturns
        treatedReturnsPromptedByNudge += other.treatedReturnsPromptedByNudge
        holdoutLapses += other.holdoutLapses
        holdoutReturns += other.holdoutReturns
    }

    /// Returns per lapse among nudged users.
    public var treatedReturnRate: Double? { ratio(treatedReturns, treatedLapses) }
    /// Returns per lapse in the holdout.
    public var holdoutReturnRate: Double? { ratio(holdoutReturns, holdoutLapses) }

    /// treated rate - holdout rate (absolute, a fraction: 0.05 is 5 percentage points).
    public var lift: Double? {
        guard let treated = treatedReturnRate, let holdout = holdoutReturnRate else { return nil }
        return treated - holdout
    }

    /// treated rate / holdout rate - 1; nil when the holdout rate is 0.
    public var relativeLift: Double? {
        guard let treated = treatedReturnRate, let holdout = holdoutReturnRate, holdout > 0 else { return nil }
        return treated / holdout - 1
    }

    /// The 95 % confidence interval of `lift` (Wald, normal approximation: trust it with at
    /// least about 10 returns and 10 non-returns in each group).
    public var liftInterval95: (low: Double, high: Double)? {
        guard let lift, let treated = treatedReturnRate, let holdout = holdoutReturnRate else { return nil }
        let variance =
            treated * (1 - treated) / Double(treatedLapses) + holdout * (1 - holdout) / Double(holdoutLapses)
        let margin = 1.959_963_985 * variance.squareRoot()
        return (lift - margin, lift + margin)
    }

    /// Whether the 95 % interval of `lift` excludes zero; nil without a lift. A lift whose
    /// interval includes zero is not significant: the run cannot tell it from no effect.
    public var isSignificant: Bool? {
        guard let interval = liftInterval95 else { return nil }
        return interval.low > 0 || interval.high < 0
    }

    enum CodingKeys: String, CodingKey {
        case treatedLapses, treatedReturns, treatedReturnsPromptedByNudge, holdoutLapses, holdoutReturns
        case treatedReturnRate, holdoutReturnRate, lift, relativeLift, liftLow95, liftHigh95, significant
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        treatedLapses = try c.decode(Int.self, forKey: .treatedLapses)
        treatedReturns = try c.decode(Int.self, forKey: .treatedReturns)
        // Absent in reports written before it was counted.
        treatedReturnsPromptedByNudge = try c.decodeIfPresent(Int.self, forKey: .treatedReturnsPromptedByNudge) ?? 0
        holdoutLapses = try c.decode(Int.self, forKey: .holdoutLapses)
        holdoutReturns = try c.decode(Int.self, forKey: .holdoutReturns)
    }

    /// The counts and the derived figures (null when undefined).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(treatedLapses, forKey: .treatedLapses)
        try c.encode(treatedReturns, forKey: .treatedReturns)
        try c.encode(treatedReturnsPromptedByNudge, forKey: .treatedReturnsPromptedByNudge)
        try c.encode(holdoutLapses, forKey: .holdoutLapses)
        try c.encode(holdoutReturns, forKey: .holdoutReturns)
        try c.encode(treatedReturnRate, forKey: .treatedReturnRate)
        try c.encode(holdoutReturnRate, forKey: .holdoutReturnRate)
        try c.encode(lift, forKey: .lift)
        try c.encode(relativeLift, forKey: .relativeLift)
        try c.encode(liftInterval95?.low, forKey: .liftLow95)
        try c.encode(liftInterval95?.high, forKey: .liftHigh95)
        try c.encode(isSignificant, forKey: .significant)
    }
}
