import Models
import Scheduling

/// The lapse campaign, a candidate source: nudges planned ahead at the days after the last
/// activity (3, and 7 and 14 for check_in_on_me), at the user's preferred or habitual active
/// time, so they fire even if the app never runs again, and are cancelled the moment the user
/// returns. give_me_space means silence; the holdout gets nothing, so the lift can be measured.
///
/// Identity: a campaign is keyed by zone-independent facts, the UTC date of the last activity
/// (`reEngagement.2027-03-01.2`: the campaign of an absence that began on 2027-03-01 UTC,
/// attempt 2). A nudge fires at least three days after that activity, so two campaigns that
/// both send never share a date, and a change of zone re-times a campaign's nudges (in the new
/// zone's local time) and never duplicates them. At most the campaign's cap of nudges (its
/// attempt days) goes out per absence.
///
/// The local night: a nudge never goes out outside the user's waking hours (the preferences'
/// `wakeTime` ..< `sleepTime`) unless what they did shows them awake then (`awakeEvidence`): it
/// moves to the morning (`localNight`), and its window ends where the night begins.
extension UserEngine {
    /// When the user usually opens the app (circular mean of recent opens, from five of them),
    /// rounded to 15 minutes: nudges go out then, not at the moment a lapse is detected. The opens
    /// are those since the last change of zone (local minutes of one zone only): after a flight
    /// the habit is held until enough opens exist in the new zone.
    static func habitualActiveTime(opens: [Int]) -> LocalTimeOfDay? {
        guard opens.count >= 5, let mean = CircularTime.mean(minutes: opens) else { return nil }
        return LocalTimeOfDay(minutesSinceMidnight: (mean.meanMinutes / 15 * 15) % 1_440)
    }

    var habitualActiveTime: LocalTimeOfDay? { state.activity.habitualActiveTime }

    /// App opens within this many minutes of a night-time nudge show the user awake then.
    static let awakeEvidenceMinutes = 60
    /// How many such opens it takes.
    static let awakeEvidenceOpens = 2
    /// How long a rule may hold a nudge the user's opens allow at night.
    static let nightNudgeWaitMinutes: Int64 = 30

    /// Whether the user's recent opens (in this zone) show them awake around local `time`.
    func awakeEvidence(at time: LocalTimeOfDay) -> Bool {
        let minute = time.minutesSinceMidnight
        let near = state.activity.recentOpenMinutes.count { open in
            let distance = abs(open - minute) % 1_440
            return min(distance, 1_440 - distance) <= UserEngine.awakeEvidenceMinutes
        }
        return near >= UserEngine.awakeEvidenceOpens
    }

    /// Whether local `time` is outside the user's waking hours.
    func isLocalNight(_ time: LocalTimeOfDay) -> Bool { !profile.preferences.isWakingTime(time) }

    /// The nudge times of the current campaign (and the UTC day of the last activity, which
    /// names it), recomputed only when something they depend on changed (most inputs change none
    /// of it: a delivery, a coach answer, a background run).
    mutating func currentReEngagementTimes() -> [Int64] {
        let preferences = profile.preferences
        let inputs = ReEngagementInputs(
            lastActiveAt: lastActiveAt, zone: zone.identifier, habitualTime: habitualActiveTime,
            enabled: preferences.isEnabled(.reEngagement), communication: profile.communication,
            wakeTime: preferences.wakeTime, sleepTime: preferences.sleepTime, opens: state.activity.recentOpenMinutes,
            lastAttemptSent: state.lapse.lastAttemptSent)
        if let cached = state.lapse.cache, cached.inputs == inputs { return cached.times }
        var candidates: [Candidate] = []
        var suppressed: [(Candidate, ReasonCode)] = []
        // Of the inputs above alone (the cache's key), not of what the last pass placed.
        appendReEngagement(to: &candidates, suppressed: &suppressed, at: lastActiveAt, keepingHeld: false)
        let times = candidates.map { $0.plannedAt.secondsSinceEpoch } + [campaignDay]
        state.lapse.cache = (inputs, times)
        return times
    }

    /// The UTC day of the last activity: the campaign's name, whatever zone the user is in.
    var campaignDay: Int64 {
        let seconds = lastActiveAt.secondsSinceEpoch
        return seconds >= 0 ? seconds / .secondsPerDay : (seconds + 1) / .secondsPerDay - 1
    }

    /// Drops what was kept for the nudges of campaigns before the current one: the coach's copy
    /// and the last traced decision. A campaign is named by the UTC day of the last activity,
    /// which only moves forward, so an earlier campaign's nudges are never candidates again (a
    /// snoozed copy of one, the user's own request, is: it keeps its copy); the next plan pass
    /// cancels those still pending. Kept, each entry would stay in the snapshot until its fire
    /// time, days ahead, for every day the user was active.
    ///
    /// The trace is unchanged: a cancellation differs from the decision it replaces, so it is
    /// traced with or without that decision kept, and what it keeps is dropped at the next move.
    mutating func forgetEarlierCampaigns() {
        let current = campaignDay
        let isEarlier = { (id: OccurrenceID) in
            id.kind == .reEngagement && id.snooze == 0 && Int64(id.day) < current
        }
        state.copy.coachCopy.removeAll(where: isEarlier)
        state.plan.lastTraced.removeAll(where: isEarlier)
    }

    /// Appends the campaign's nudges; a silenced campaign appends its first nudge to
    /// `suppressed` with the reason, once the user is actually away at `now`.
    /// `keepingHeld`: a nudge still pending past its time keeps its day (below).
    func appendReEngagement(
        to candidates: inout [Candidate], suppressed: inout [(Candidate, ReasonCode)], at now: Instant,
        keepingHeld: Bool = true
    ) {
        let preferences = profile.preferences
        guard preferences.isEnabled(.reEngagement) else { return }
        let response = profile.communication.absenceResponse
        let days: [Int] =
            switch response {
            case .giveMeSpace: [Int(configuration.lapseAfterSeconds / .secondsPerDay)]
            case .lightNudge: configuration.lightNudgeAttemptDays
            case .checkInOnMe: configuration.checkInOnMeAttemptDays
            }
        // The cap: never more nudges in one absence than the campaign has attempts, and no
        // attempt up to the last one delivered again (attempts go out in order).
        let lastSent = state.lapse.lastAttemptSent
        guard lastSent < days.count else { return }
        let nominal = profile.communication.preferredTimes.first ?? habitualActiveTime ?? configuration.nudgeTime
        let night = isLocalNight(nominal) && !awakeEvidence(at: nominal)
        let time = night ? preferences.wakeTime : nominal
        for (index, day) in days.enumerated() {
            let due = lastActiveAt + Int64(day) * .secondsPerDay
            let id = OccurrenceID(.reEngagement, daysSinceEpoch: campaignDay, .attempt(index + 1))
            if response == .giveMeSpace || isHeldOut {
                // Silence (give_me_space), or the control group (no nudge, so the lift of nudges
                // can be measured); the trace says so once the user is actually away.
                if due <= now {
                    suppressed.append(
                        (
                            candidate(id, at: nextInstant(of: time, notBefore: due)),
                            response == .giveMeSpace ? .absenceGiveMeSpace : .holdout
                        ))
                }
                return
            }
            guard index + 1 > lastSent else { continue }
            // Not before it is due, nor in the past: one whose time passed unsent (a change of
            // zone moved it, a daily cap dropped it) goes out at the next such time.
            let earliest = max(due, now + 1)
            var plannedAt = nextInstant(of: time, notBefore: earliest)
            // Still pending from an earlier pass, held by a rule (quiet hours) past its time on
            // the day it fires: that time has not passed unsent, so the nudge keeps it. Moved on,
            // a pass each day between its time and the rule's end (a server's daily job) would
            // move it a day on for ever. Read from where it fires, not from what the pass kept
            // of its time, so a full pass and an incremental one agree.
            if keepingHeld, let pending = state.plan.planned.first(where: { $0.id == id }), pending.fireAt > now {
                let day = zone.localDateTime(at: pending.fireAt).daysSinceEpoch
                let held = zone.instant(for: LocalDateTime(daysSinceEpoch: day, time: time))
                if held >= due && held < plannedAt && held <= pending.fireAt { plannedAt = held }
            }
            var nudge = candidate(id, at: plannedAt)
            // A nudge in waking hours may wait for a rule until the night begins; one the user's
            // opens allow at night, half an hour at most (what they did shows them awake then only).
            nudge.windowEnd =
                isLocalNight(time)
                ? nudge.plannedAt + UserEngine.nightNudgeWaitMinutes * .secondsPerMinute
                : nightStart(after: nudge.plannedAt)
            if night {
                nudge.retiming = Retiming(.localNight, nominalAt: nextInstant(of: nominal, notBefore: earliest))
            } else if let moved = state.user.zoneChangedAt, moved > lastActiveAt {
                nudge.retiming = Retiming(.timeZoneChanged, nominalAt: nil)
            }
            candidates.append(nudge)
        }
    }

    /// The first instant at or after `instant` at which the local clock reads `time`.
    func nextInstant(of time: LocalTimeOfDay, notBefore instant: Instant) -> Instant {
        // By day number: the planner asks this for every lapse nudge of every pass.
        let day = zone.localDateTime(at: instant).daysSinceEpoch
        let sameDay = zone.instant(for: LocalDateTime(daysSinceEpoch: day, time: time))
        return sameDay >= instant ? sameDay : zone.instant(for: LocalDateTime(daysSinceEpoch: day + 1, time: time))
    }

    /// Where the local night begins after `instant` (in waking hours): the next `sleepTime`.
    func nightStart(after instant: Instant) -> Instant {
        nextInstant(of: profile.preferences.sleepTime, notBefore: instant + 1)
    }
}
