import Models

/// Swarm testing (`simulate --swarm`, `make soak`): each seed draws its own world within wide
/// ranges, so that many seeds together reach combinations no hand-written scenario lists: which
/// faults are on and how hard, the population's mix of personas, the time zones (the edges of
/// local time among them), and preferences from the lenient to the extreme (20-hour quiet
/// hours, caps of 1). The draw is a scenario document read by `Scenario.parse`, so it is
/// checked by the same rules as a file; only the seed decides it.
public enum Swarm {
    /// The zones a swarm seed draws from: everyday ones and the edges of local time (+14, -11,
    /// 30- and 45-minute offsets, negative and 30-minute DST, a change at midnight, a 2-hour DST).
    static let zones = [
        "America/New_York", "America/Los_Angeles", "America/St_Johns", "America/Havana", "America/Santiago",
        "Europe/London", "Europe/Dublin", "Europe/Berlin", "Africa/Johannesburg", "Asia/Kolkata", "Asia/Kathmandu",
        "Asia/Tokyo", "Australia/Lord_Howe", "Australia/Eucla", "Pacific/Chatham", "Pacific/Kiritimati",
        "Pacific/Pago_Pago", "Pacific/Tongatapu", "Pacific/Marquesas", "Antarctica/Troll", "UTC",
    ]
    static let quietHours = [
        "none", "22:00-07:00", "23:00-06:30", "21:00-09:00", "22:30-08:00@sat,sun", "20:00-16:00", "00:00-23:30",
        "12:00-11:00",
    ]
    /// Starts just before the year's hard weeks: the US, EU and southern DST changes, the New Year
    /// (with ISO week 53 of 2026), and an ordinary week.
    static let starts = [
        "2027-03-10", "2027-03-24", "2027-04-01", "2027-09-22", "2027-10-27", "2026-12-27", "2027-06-09",
    ]
    static let personas = [
        "morningRunner", "eveningLifter", "irregular", "lapsing", "churner", "giveMeSpace", "nightShift", "traveller",
    ]

    /// The world of swarm seed `base.seed`: the base's name, seed, length, population size,
    /// threads and drain; everything else drawn, the start among `starts` included.
    public static func draw(from base: Scenario) throws(ScenarioError) -> Scenario {
        var random = SeededGenerator(seed: base.seed).derived(0x5A_A4_3D)
        func uniform(_ range: ClosedRange<Double>) -> Double {
            range.lowerBound + random.nextUnit() * (range.upperBound - range.lowerBound)
        }
        /// Off for about a third of seeds, else a rate within `range`: swarm testing's point is
        /// that some faults are absent, so others can show.
        func sometimes(_ range: ClosedRange<Double>) -> Double {
            random.chance(1.0 / 3) ? 0 : (uniform(range) * 1_000).rounded() / 1_000
        }
        /// Some of `names`, each with a weight of 1 to 5 (at least `least` of them).
        func some(_ names: [String], least: Int = 1) -> [String: Int] {
            var picked: [String: Int] = [:]
            for name in names where random.chance(0.4) { picked[name] = random.int(in: 1...5) }
            while picked.count < least { picked[names[random.int(in: 0...(names.count - 1))]] = random.int(in: 1...5) }
            return picked
        }
        let faults: [String: Double] = [
            "backgroundNeverRun": sometimes(0...0.3),
            "backgroundMeanDelayMinutes": (uniform(0...180)).rounded(),
            "backgroundEarlyExpiration": sometimes(0...0.3),
            "permissionRevokedPerUserWeek": sometimes(0...0.2),
            "travelPerTravellerDay": sometimes(0...1),
            "apnsOutagesPerWeek": sometimes(0...5),
            "apnsOutageMinutes": uniform(5...120).rounded(),
            "apnsTooManyRequestsBurstsPerWeek": sometimes(0...5),
            "apnsTooManyRequestsShare": sometimes(0...0.8),
            "apnsLatencySeconds": sometimes(0...5),
            "apnsUnregisteredAfterHours": uniform(1...72).rounded(),
            "deviceOfflinePerUserDay": sometimes(0...0.5),
            "deviceOfflineMeanHours": uniform(1...24).rounded(),
            "uninstallOnChurn": sometimes(0...1),
            "appKilledPerUserDay": sometimes(0...0.5),
            "upgradeShareOfRelaunches": sometimes(0...1),
            "storeWriteFailure": sometimes(0...0.05),
            "clockCorrectionPerUserDay": sometimes(0...0.5),
            "clockSetByUserPerUserWeek": sometimes(0...0.5),
        ]
        let document: [String: Any] = [
            "name": base.name, "seed": base.seed, "start": starts[random.int(in: 0...(starts.count - 1))],
            "weeks": base.weeks,
            "users": base.users, "threads": base.threads, "drainDays": base.drainDays,
            "timeZones": some(zones, least: 2), "personas": some(personas),
            "preferences": [
                "quietHours": some(quietHours),
                "hydration": some(["off", "hourly", "bi_hourly", "tri_daily"]),
                "maxPerHour": some(["1", "2", "3", "10"]),
                "maxPerDay": some(["none", "1", "3", "6", "12"]),
                "absenceResponse": some(["give_me_space", "light_nudge", "check_in_on_me"]),
                "disabledKinds": some(["none", "hydration", "mealReminder", "morningGreeting", "reEngagement"]),
                "kudosSetting": some(["batched", "daily", "weekly", "immediate", "enabled", "disabled"]),
            ],
            "faults": faults,
            "coach": [
                "meanLatencyMillis": uniform(100...2_500).rounded(), "slowShare": sometimes(0...0.2),
                "failureShare": sometimes(0...0.3), "malformedShare": sometimes(0...0.2),
            ],
            "attentionBudget": ["perDay": random.chance(0.2) ? "none" : random.int(in: 1...12) as Any],
            "locales": some(["en", "de"]),
        ]
        return try Scenario.parse(document, file: "swarm seed \(base.seed)")
    }
}
