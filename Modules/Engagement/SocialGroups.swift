import Content
public import Models
import Scheduling

/// Social items waiting to go out as one notification: a single item, a batch (same kind and
/// topic, closing at the end of the batching window or at the maximum count, as Knock's batch
/// window) or a digest (same kind, at the user's digest time). A group never mixes keys.
struct NotificationGroup: Hashable, Sendable {
    typealias Mode = NotificationGroupMode

    var id: OccurrenceID
    var mode: Mode
    var kind: NotificationKind
    /// The grouping key: kind and topic for batches and singles, kind and period for digests.
    var key: String
    private(set) var items: [SocialEvent]
    var sendAt: Instant
    /// When each item was first folded (into this group or one it was moved from), by position.
    private(set) var foldedAt: [Instant]
    /// Items that arrived while the user already had `EngineConfiguration.waitingSocialItemLimit`
    /// items waiting: counted in the copy ("12 people cheered"), not kept one by one.
    private(set) var countedItems = 0
    /// When the oldest and the newest counted items were folded; nil while none is.
    private(set) var countedSince: Instant?
    private(set) var countedLatest: Instant?

    init(
        id: OccurrenceID, mode: Mode, kind: NotificationKind, key: String, items: [SocialEvent], sendAt: Instant,
        foldedAt: [Instant], countedItems: Int = 0, countedSince: Instant? = nil, countedLatest: Instant? = nil
    ) {
        precondition(items.count == foldedAt.count, "one fold time per item")
        precondition(
            (countedItems > 0) == (countedSince != nil) && (countedSince != nil) == (countedLatest != nil),
            "fold times for counted items, only then")
        self.id = id
        self.mode = mode
        self.kind = kind
        self.key = key
        self.items = items
        self.sendAt = sendAt
        self.foldedAt = foldedAt
        self.countedItems = countedItems
        self.countedSince = countedSince
        self.countedLatest = countedLatest
    }

    var isDigest: Bool { mode == .dailyDigest || mode == .weeklyDigest }

    /// How many items the notification speaks for: those kept and those only counted.
    var itemCount: Int { items.count + countedItems }

    mutating func add(_ item: SocialEvent, foldedAt instant: Instant) {
        items.append(item)
        foldedAt.append(instant)
    }

    /// Counts `count` items without keeping them, folded from `since` to `latest`.
    mutating func addCounted(_ count: Int, since: Instant, latest: Instant) {
        guard count > 0 else { return }
        countedItems += count
        countedSince = min(countedSince ?? since, since)
        countedLatest = max(countedLatest ?? latest, latest)
    }

    /// How long an item may wait once folded: when a digest it is in is blocked after that, it
    /// is dropped, traced `stale`, rather than carried to the next one. A digest the caps keep
    /// blocking (a cap of 1 a day taken by earlier notifications every day) would otherwise carry
    /// its items for ever. A weekly digest's items, blocked, move into a daily digest and are
    /// dropped if that one is blocked too.
    static let maximumWaitSeconds: Int64 = 2 * .secondsPerDay

    /// A group's request revision is its item count up to this (what a snapshot reads back for a
    /// planned request's revision); beyond it the copy still counts on, the revision stays.
    static let revisionLimit = (1 << 20) - 1
}

extension UserEngine {
    /// Takes a social event in according to the kind's setting: send it alone, batch it, fold it
    /// into a digest, or (disabled) drop it and say so.
    mutating func receive(_ event: SocialEvent, at now: Instant, into effects: inout [Effect]) {
        // Seen while its first copy still waits (for a batch, its whole batching window): once.
        /// The event is not taken: traced as suppressed, with why.
        func suppress(_ reason: ReasonCode, _ detail: TraceDetail) {
            effects.append(
                .trace(
                    TraceEntry(
                        at: now, userID: profile.id, subject: .socialEvent(event.id), kind: event.kind,
                        decision: .suppressed, reason: reason, why: detail)))
        }
        if state.social.groups.contains(where: { group in group.items.contains { $0.id == event.id } }) {
            suppress(.duplicateEvent, .duplicateEvent(event.id))
            return
        }
        let preferences = profile.preferences
        let setting = event.kind.isSocial ? preferences.setting(for: event.kind) : .disabled
        guard setting != .disabled else {
            suppress(.kindDisabled, .socialKindDisabled(event.kind))
            return
        }
        // Beyond the limit an item is only counted, in its kind's digest: one user's flood of
        // events cannot grow the state that is rewritten on every input.
        if state.social.groups.reduce(0, { $0 + $1.items.count }) >= configuration.waitingSocialItemLimit {
            let index = digest(of: event.kind, weekly: setting == .weekly, at: now)
            state.social.groups[index].addCounted(1, since: now, latest: now)
            traceFolded(event, into: state.social.groups[index], reason: .waitingItemsFull, at: now, into: &effects)
            return
        }
        switch setting {
        case .immediate, .enabled:
            let group = newGroup(
                .single, kind: event.kind, key: "\(event.kind.rawValue)/\(event.topic)", sendAt: now + 1,
                items: [event], at: now)
            state.social.groups.append(group)
        case .batched:
            let key = "\(event.kind.rawValue)/\(event.topic)"
            // A batch is open until it is sent.
            if let index = state.social.groups.firstIndex(where: {
                $0.mode == .batch && $0.key == key && $0.sendAt > now
            }) {
                state.social.groups[index].add(event, foldedAt: now)
                if state.social.groups[index].items.count >= preferences.maxBatchItems {
                    state.social.groups[index].sendAt = now + 1
                }
                traceFolded(event, into: state.social.groups[index], reason: .batched, at: now, into: &effects)
            } else {
                let window = Int64(preferences.batchingWindowMinutes) * .secondsPerMinute
                let closes = preferences.maxBatchItems <= 1 ? now + 1 : now + window
                let group = newGroup(.batch, kind: event.kind, key: key, sendAt: closes, items: [event], at: now)
                state.social.groups.append(group)
                traceFolded(event, into: group, reason: .batched, at: now, into: &effects)
            }
        case .daily, .weekly:
            addToDigest(event, weekly: setting == .weekly, reason: .digest, at: now, into: &effects)
        case .disabled:
            break
        }
    }

    /// Drops the waiting groups of kinds the user has just disabled: each item is traced as
    /// suppressed (`kindDisabled`), so it is neither sent nor owed.
    mutating func releaseDisabledGroups(at now: Instant, into effects: inout [Effect]) {
        let preferences = profile.preferences
        guard state.social.groups.contains(where: { !preferences.isEnabled($0.kind) }) else { return }
        for group in state.social.groups where !preferences.isEnabled(group.kind) {
            for item in group.items {
                effects.append(
                    .trace(
                        TraceEntry(
                            at: now, userID: profile.id, subject: .socialEvent(item.id), kind: item.kind,
                            decision: .suppressed, reason: .kindDisabled, why: .disabledBeforeGroup(item.kind),
                            group: group.id, groupKey: group.key)))
            }
            if group.countedItems > 0 {
                effects.append(
                    .trace(
                        TraceEntry(
                            at: now, userID: profile.id, subject: .occurrence(group.id), kind: group.kind,
                            decision: .suppressed, reason: .kindDisabled,
                            why: .countedItemsDisabled(count: group.countedItems, kind: group.kind),
                            group: group.id, groupKey: group.key, countedItems: group.countedItems)))
            }
        }
        state.social.groups.removeAll { !preferences.isEnabled($0.kind) }
    }

    /// Moves the items of a group that could not go out (blocked, or past its deadline) into the
    /// next daily digest of its kind, so no item is lost and none is sent twice.
    mutating func regroup(_ id: OccurrenceID, because reason: ReasonCode, at now: Instant, into effects: inout [Effect])
    {
        guard let index = state.social.groups.firstIndex(where: { $0.id == id }) else { return }
        let group = state.social.groups.remove(at: index)
        for (item, foldedAt) in zip(group.items, group.foldedAt) {
            guard !group.isDigest || now - foldedAt < NotificationGroup.maximumWaitSeconds else {
                effects.append(
                    .trace(
                        TraceEntry(
                            at: now, userID: profile.id, subject: .socialEvent(item.id), kind: item.kind,
                            decision: .dropped, reason: .stale, plannedAt: group.sendAt,
                            why: .staleInDigest(since: OffsetDateTime(foldedAt, in: zone), blockedBy: reason),
                            group: group.id, groupKey: group.key)))
                continue
            }
            addToDigest(
                item, weekly: false, reason: reason, at: now, after: group.sendAt, foldedAt: foldedAt, into: &effects)
        }
        moveCounted(of: group, because: reason, at: now, into: &effects)
    }

    /// The counted items of a group that could not go out follow its kept ones into the next daily
    /// digest, or are dropped once the newest of them has waited too long (their ids were never
    /// kept, so they move together, the oldest one's wait carried along). One trace entry speaks
    /// for them all (`TraceEntry.countedItems`): its request is the old group, its group the new.
    private mutating func moveCounted(
        of group: NotificationGroup, because reason: ReasonCode, at now: Instant, into effects: inout [Effect]
    ) {
        guard group.countedItems > 0, let since = group.countedSince, let latest = group.countedLatest else { return }
        guard !group.isDigest || now - latest < NotificationGroup.maximumWaitSeconds else {
            effects.append(
                .trace(
                    TraceEntry(
                        at: now, userID: profile.id, subject: .occurrence(group.id), kind: group.kind,
                        decision: .dropped, reason: .stale, plannedAt: group.sendAt,
                        why: .countedItemsStale(
                            count: group.countedItems, since: OffsetDateTime(since, in: zone), blockedBy: reason),
                        group: group.id, groupKey: group.key, countedItems: group.countedItems)))
            return
        }
        let index = digest(of: group.kind, weekly: false, at: now, after: group.sendAt)
        state.social.groups[index].addCounted(group.countedItems, since: since, latest: latest)
        let target = state.social.groups[index]
        effects.append(
            .trace(
                TraceEntry(
                    at: now, userID: profile.id, subject: .occurrence(group.id), kind: group.kind,
                    decision: .folded, reason: reason, plannedAt: target.sendAt,
                    why: .countedItemsMoved(count: group.countedItems, into: summary(of: target)),
                    group: target.id, groupKey: target.key, countedItems: group.countedItems)))
    }

    private mutating func addToDigest(
        _ event: SocialEvent, weekly: Bool, reason: ReasonCode, at now: Instant, after: Instant? = nil,
        foldedAt: Instant? = nil, into effects: inout [Effect]
    ) {
        let index = digest(of: event.kind, weekly: weekly, at: now, after: after)
        state.social.groups[index].add(event, foldedAt: foldedAt ?? now)
        traceFolded(event, into: state.social.groups[index], reason: reason, at: now, into: &effects)
    }

    /// The index of the next daily (or weekly) digest of `kind` due after `after` (or `now`),
    /// opened empty when there is none.
    private mutating func digest(of kind: NotificationKind, weekly: Bool, at now: Instant, after: Instant? = nil)
        -> Int
    {
        let mode: NotificationGroup.Mode = weekly ? .weeklyDigest : .dailyDigest
        let key = "\(kind.rawValue)/\(mode.rawValue)"
        let sendAt = digestTime(weekly: weekly, after: max(now, after ?? now))
        if let open = state.social.groups.firstIndex(where: { $0.mode == mode && $0.key == key && $0.sendAt == sendAt })
        {
            return open
        }
        state.social.groups.append(newGroup(mode, kind: kind, key: key, sendAt: sendAt, items: [], at: now))
        return state.social.groups.count - 1
    }

    /// The next daily (or weekly) digest time after `instant`, in the user's zone.
    func digestTime(weekly: Bool, after instant: Instant) -> Instant {
        let preferences = profile.preferences
        let match = CalendarMatch(
            weekday: weekly ? preferences.weeklyDigestDay : nil, hour: preferences.digestTime.hour,
            minute: preferences.digestTime.minute)
        return match.nextMatch(after: instant, in: zone) ?? instant + .secondsPerDay
    }

    private mutating func newGroup(
        _ mode: NotificationGroup.Mode, kind: NotificationKind, key: String, sendAt: Instant, items: [SocialEvent],
        at now: Instant
    ) -> NotificationGroup {
        state.social.groupSequence = (state.social.groupSequence + 1) & 0x7FFF
        let day = zone.localDateTime(at: now).daysSinceEpoch
        return NotificationGroup(
            id: OccurrenceID(kind, daysSinceEpoch: day, .group(state.social.groupSequence)), mode: mode, kind: kind,
            key: key, items: items, sendAt: sendAt, foldedAt: items.map { _ in now })
    }

    private func traceFolded(
        _ event: SocialEvent, into group: NotificationGroup, reason: ReasonCode, at now: Instant,
        into effects: inout [Effect]
    ) {
        effects.append(
            .trace(
                TraceEntry(
                    at: now, userID: profile.id, subject: .socialEvent(event.id), kind: event.kind,
                    decision: .folded, reason: reason, plannedAt: group.sendAt, why: .folded(into: summary(of: group)),
                    group: group.id, groupKey: group.key)))
    }

    /// A group as a trace names it: its mode, how many items it holds and when it goes out.
    private func summary(of group: NotificationGroup) -> GroupSummary {
        GroupSummary(mode: group.mode, itemCount: group.itemCount, sendAt: OffsetDateTime(group.sendAt, in: zone))
    }

    /// The candidate of a group: singles follow their kind's policy (and fold into the digest when
    /// blocked); batches and digests wait out any rule for up to a day and never fold again.
    func groupCandidate(_ group: NotificationGroup) -> Candidate {
        var policy = KindPolicy.standard(for: group.kind)
        if group.mode != .single {
            policy.deferral = .deferUntilAllowed
            policy.stalenessSeconds = .secondsPerDay
            // Several items the user chose to get together: worth more than any routine reminder.
            policy.relevance = 0.9
        }
        return Candidate(
            id: group.id, kind: group.kind, plannedAt: group.sendAt,
            level: profile.preferences.interruptionLevel(for: group.kind), policy: policy,
            revision: min(group.itemCount, NotificationGroup.revisionLimit),
            isDigest: group.isDigest)
    }

    /// The grouped notification, in the user's language (`UserProfile.locale`): a summary that
    /// never names other users beyond what the privacy level allows ("3 people cheered your
    /// morning run", "3 Personen haben deinen Morgenlauf angefeuert").
    func groupRequest(_ group: NotificationGroup, candidate: Candidate, fireAt: Instant) -> NotificationRequest {
        let copy = content.catalog.withLibrary(for: profile.locale) { library in
            library.groupSummary(
                group.kind, count: group.itemCount, topic: group.items.first?.topic ?? "",
                firstActor: group.items.first.map { SocialSender($0) }, period: group.mode.period,
                privacy: profile.privacyLevel)
        }
        let body = NotificationContent(
            kind: group.kind, title: copy.title, body: copy.body, threadID: "\(group.kind.threadID).\(group.key)",
            interruptionLevel: candidate.level, relevanceScore: candidate.policy.relevance,
            sound: profile.preferences.soundEnabled ? NotificationStyling.sound(for: group.kind) : nil,
            deepLink: .inbox)
        return NotificationRequest(
            identifier: group.id.requestID, content: body, trigger: TriggerChoice.trigger(for: fireAt, in: zone))
    }
}

extension UserEngine {
    /// What a social event whose id the user already received, at `firstSeen`, yields instead of
    /// `handle(.socialEvent(_:), at:)`: its suppression, traced (`duplicateEvent`), and nothing
    /// else; the state is unchanged. The engine knows an id only while its item waits; a host
    /// that keeps the ids it took in for longer (the runtime keeps them for a retention window)
    /// answers a repeat with this, so a webhook retried after the notification went out does not
    /// notify the user again.
    public func repeatedSocialEvent(_ event: SocialEvent, firstSeen: Instant, at now: Instant) -> [Effect] {
        [
            .trace(
                TraceEntry(
                    at: now, userID: profile.id, subject: .socialEvent(event.id), kind: event.kind,
                    decision: .suppressed, reason: .duplicateEvent,
                    why: .repeatedEvent(event.id, firstSeen: OffsetDateTime(firstSeen, in: zone))))
        ]
    }
}

extension NotificationGroup.Mode {
    /// The period a group's copy sums up.
    var period: GroupPeriod {
        switch self {
        case .single, .batch: .none
        case .dailyDigest: .today
        case .weeklyDigest: .thisWeek
        }
    }
}
