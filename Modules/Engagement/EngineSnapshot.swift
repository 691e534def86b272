public import Content
public import Models
import Scheduling

/// A user's engine state as compact bytes, for a runtime to save after each input and restore
/// after a restart: restoring and continuing gives exactly the effects of an engine that never
/// stopped.
///
/// Format, version 9 (`CompactWriter`: LEB128 varints, zigzag for signed values):
/// - the magic bytes `E` `S`, then the version;
/// - `base`: the last activity, in seconds since 1970; every other instant is written as its
///   signed distance from `base` (most are within days of it, so two or three bytes);
/// - then, in order, the state's groups as `EngineState` declares them: activity, user,
///   plan, lapse, reminders, social, coaching, copy, Live Activities, then what the phone holds
///   of the local plan (and what it held at the last pass, when that changed since), whether the
///   device refuses notifications and the local plan's revision. Instants are minutes from `base` when whole
///   minutes (flag bit 0), else seconds (flag bit 1). Occurrence identities in lists are
///   (day from base's day, kind ordinal, slot, snooze); the keys of maps are their packed form
///   (`OccurrenceID.packed`), each as its distance from the one before. Lists have their count first.
///
/// Not stored, because they are derived: the profile and the zone (the runtime stores the
/// profile and passes both in), the recipient, the holdout membership, the hydration series'
/// times, the timing rules (from the response counts), the nudge-time cache, and what the last
/// pass is remembered by, the plan's key, the earliest nudge it planned and its candidates in
/// order (recomputed for the instant of the last pass, `rememberLastPass`).
///
/// What is kept per occurrence, and until when (the snapshot's size is bounded by these rules,
/// not by a cap): the last traced decision and the coach's copy leave when the occurrence fires
/// (`retireFired`), or when they belong to a lapse campaign before the current one and are not
/// a snoozed copy (`forgetEarlierCampaigns`; the cancellations of the campaign just moved on are
/// traced and kept until the next move); the rest leave about a day after their time. A rule that drops
/// more changes no format: older bytes restore with the entries, which leave at the next move.
///
/// Migration rule: a new version adds a `case` to the reader and keeps reading every older
/// version it ever wrote; the writer writes only the newest. Bytes of an unknown version, or
/// bytes that do not parse, are an error (`SnapshotError`), never a silent fresh state.
///
/// Versions:
/// - 9: what the phone held when the last pass ran, when something has changed it since
///   (`PlanState.holdsAtLastPass`): an optional map like the holds, after when the phone was to
///   hear. The reader rebuilds the last pass's key from it. Read from an older snapshot, which
///   stores no pass: none.
/// - 8: when the phone was to hear of the first change it has not pulled
///   (`PlanState.phoneHearsBy`), optional, after how it was to hear of the last pass. Read from
///   an older snapshot: none, so the phone is taken to hear until the next unpulled change.
/// - 7: what the user's phone holds of the local plan (`UserEngine.phoneApplied`), a map of
///   occurrences to the instants the phone fires them, and how the phone was to hear of the
///   last pass (`PhoneHearing`: 0 at once, 1 when it pulls, 2 then an instant), before whether
///   the device refuses notifications.
///   Read from an older snapshot: nothing held, so nothing is committed until the phone's next
///   pull.
/// - 6: the local plan's revision (`UserEngine.localPlanRevision`), a varint at the end. Read
///   from an older snapshot: 0, the first revision of every plan; a phone holding a plan read
///   under an older build's version pulls it once more.
/// - 5: the items a social group only counts (beyond `EngineConfiguration.waitingSocialItemLimit`):
///   their number after the group's items, then, when not zero, the oldest and the newest one's
///   fold times. Read
///   from an older snapshot: none.
/// - 4: whether the device refuses notifications (`EngineInput.notificationPermission`), one
///   byte at the end. Read from an older snapshot: allowed (a refused `schedule` tells it again).
///   And the fold time of each item of a social group (a list after the group's send time);
///   read from an older snapshot: a day before the group's send time.
/// - 3: the Live Activities running (`LiveActivityTracker`) at the end, as JSON in a string,
///   empty when none ever ran (one byte). Read from a version 2 or 1 snapshot: none.
/// - 2: response learning per slot (`LearningSlot`): its cells are keyed by kind, slot and
///   hour, each key written as its distance from the one before.
/// - 1: response cells keyed by kind and hour (`kind.ordinal * 24 + hour`, absolute). Read by
///   moving each cell into the slot of its kind whose nominal hour it is (breakfast for 08:00,
///   the 13:00 hydration time for 13:00), else the slot whose window holds the hour's middle;
///   a cell no slot claims (a shift learned across slots) is forgotten.
public enum EngineSnapshot {
    public static let version: UInt64 = 9
    /// Every version the reader reads.
    public static let readableVersions: ClosedRange<UInt64> = 1...9
    static let magic: [UInt8] = [0x45, 0x53]
}

/// Bytes that are not an engine snapshot this version can read.
public struct SnapshotError: Error, Hashable, Sendable, CustomStringConvertible {
    public var problem: String
    public var description: String { "engine snapshot: \(problem)" }
}

extension EngineSnapshot {
    /// The local plan's revision (`UserEngine.localPlanRevision`) of snapshot `bytes`, read
    /// without restoring the engine: from version 6 on it is the last varint, and the byte before it
    /// (whether the device refuses notifications, 0 or 1) never has the continuation bit, so the
    /// number is the bytes after the last one without it, before the end. An older snapshot
    /// holds none: 0, as restoring it gives.
    public static func localPlanRevision(of bytes: [UInt8]) throws(SnapshotError) -> Int {
        guard bytes.count >= 3, bytes[0] == magic[0], bytes[1] == magic[1] else {
            throw SnapshotError(problem: "not an engine snapshot (bad magic bytes)")
        }
        // Versions up to 127 are one byte.
        let version = UInt64(bytes[2])
        guard readableVersions.contains(version) else {
            throw SnapshotError(problem: "version \(version) is not one this engine reads")
        }
        guard version >= 6 else { return 0 }
        guard let last = bytes.last, last & 0x80 == 0 else { throw SnapshotError(problem: "truncated revision") }
        var start = bytes.count - 1
        while start > 3, bytes[start - 1] & 0x80 != 0 { start -= 1 }
        guard bytes.count - start <= 9 else { throw SnapshotError(problem: "revision too long") }
        var value = 0
        for byte in bytes[start...].reversed() { value = value << 7 | Int(byte & 0x7F) }
        return value
    }
}

extension UserEngine {
    /// The state as snapshot bytes (see `EngineSnapshot`).
    public func snapshot() -> [UInt8] { snapshot(version: EngineSnapshot.version) }

    /// The state in the format of `version` (one of `EngineSnapshot.readableVersions`), as an
    /// older app version wrote it: for the migration's tests and the simulator's upgrade fault.
    /// What that version cannot hold is left out; a runtime writes the newest (`snapshot()`).
    public func snapshot(version: UInt64) -> [UInt8] {
        precondition(EngineSnapshot.readableVersions.contains(version), "no snapshot version \(version)")
        var writer = CompactWriter()
        for byte in EngineSnapshot.magic { writer.byte(byte) }
        writer.unsigned(version)
        var codec = SnapshotCodec(base: state.activity.lastActiveAt, version: version)
        writer.signed(codec.base.secondsSinceEpoch)
        codec.write(state, to: &writer)
        return writer.bytes
    }

    /// An engine restored from `snapshot()` bytes, for `profile` in `zone`, with the same
    /// configuration and copy writer as the engine that wrote them.
    public init(
        restoring bytes: [UInt8], profile: UserProfile, zone: ZoneRules, configuration: EngineConfiguration = .init(),
        content: ContentGenerator
    ) throws(SnapshotError) {
        var reader = CompactReader(bytes)
        do {
            guard try reader.byte() == EngineSnapshot.magic[0], try reader.byte() == EngineSnapshot.magic[1] else {
                throw SnapshotError(problem: "not an engine snapshot (bad magic bytes)")
            }
            let version = try reader.unsigned()
            guard EngineSnapshot.readableVersions.contains(version) else {
                let readable = EngineSnapshot.readableVersions
                throw SnapshotError(
                    problem:
                        "version \(version) is not one this engine reads (it reads \(readable.lowerBound)...\(readable.upperBound))"
                )
            }
            let codec = SnapshotCodec(
                base: Instant(secondsSinceEpoch: try reader.signed(limit: SnapshotCodec.secondsLimit)), version: version
            )
            self.init(profile: profile, zone: zone, now: codec.base, configuration: configuration, content: content)
            let legacyResponses = try codec.read(into: &state, from: &reader)
            if !legacyResponses.isEmpty {
                let engine = self
                state.coaching.responses.adopt(legacy: legacyResponses) { engine.learningSlot(of: $0, hour: $1) }
            }
            guard reader.isAtEnd else { throw SnapshotError(problem: "\(bytes.count - reader.offset) bytes left over") }
        } catch let error as CompactBytesError {
            throw SnapshotError(problem: error.description)
        } catch let error as SnapshotError {
            throw error
        } catch {
            throw SnapshotError(problem: "\(error)")
        }
        state.coaching.timing = state.coaching.responses.timingRules(for: UserEngine.adjustableKinds)
        if let at = state.plan.lastPassAt { rememberLastPass(at: at) }
    }
}

/// Writes and reads the state's parts in the order the format documents.
struct SnapshotCodec {
    /// Instants and distances are read within ±10^11 seconds (3,000 years): arithmetic on them
    /// cannot overflow, whatever the bytes say.
    static let secondsLimit: Int64 = 100_000_000_000
    static let daysLimit: Int64 = 100_000_000
    /// Lists are read up to this many elements: far beyond what an engine holds (pruning keeps
    /// its lists to days of history), so every snapshot the writer makes reads back.
    static let listLimit = 1 << 20
    let base: Instant
    /// The format version written or read.
    var version: UInt64 = EngineSnapshot.version
    var baseDay: Int64 { base.secondsSinceEpoch / .secondsPerDay }

    // MARK: - Writing

    func write(_ state: EngineState, to w: inout CompactWriter) {
        let activity = state.activity
        w.optional(activity.activeUntil) { time($1, &$0) }
        w.optional(activity.sessionHold) { time($1, &$0) }
        w.list(activity.recentOpenMinutes) { $0.count($1) }
        writeMap(activity.done, &w) { time($1, &$0) }
        w.optional(state.user.zoneChangedAt) { time($1, &$0) }

        let plan = state.plan
        w.list(plan.planned) { w, item in
            id(item.id, &w)
            time(item.plannedAt, &w)
            w.signed(item.fireAt - item.plannedAt)
            w.byte((item.followsWallClock ? 1 : 0) | (item.repeatsDaily ? 2 : 0))
            w.count(item.revision)
        }
        w.list(plan.ledger.instants) { time(Instant(secondsSinceEpoch: $1), &$0) }
        writeMap(plan.fired, &w) { time($1, &$0) }
        writeMap(plan.lastTraced, &w) { w, traced in
            w.count(TraceDecision.allCases.firstIndex(of: traced.decision)!)
            w.count(ReasonCode.allCases.firstIndex(of: traced.reason)!)
            time(traced.plannedAt, &w)
            w.optional(traced.fireAt) { $0.signed($1 - traced.plannedAt) }
        }
        // An older version cannot hold all the plan's inputs (a device's refusal, before 4; the
        // holds of the last pass, before 9): its reader plans afresh at its first input rather
        // than trust a key it cannot rebuild.
        w.optional(plan.lastKey == nil || version < EngineSnapshot.version ? nil : plan.lastPassAt) { time($1, &$0) }

        w.count(state.lapse.lastAttemptSent)
        for list in [state.reminders.snoozed, state.reminders.followUps] {
            w.list(list) { w, candidate in
                id(candidate.id, &w)
                time(candidate.plannedAt, &w)
                w.count(InterruptionLevel.allCases.firstIndex(of: candidate.level)!)
            }
        }

        w.count(state.social.groupSequence)
        w.list(state.social.groups) { w, group in
            id(group.id, &w)
            w.count(NotificationGroup.Mode.allCases.firstIndex(of: group.mode)!)
            w.string(group.key)
            time(group.sendAt, &w)
            if version >= 4 { w.list(group.foldedAt) { w, at in time(at, &w) } }
            w.list(group.items) { w, item in
                w.string(item.id)
                w.count(item.kind.ordinal)
                w.string(item.actorName)
                w.string(item.topic)
                w.bool(item.isMutualFriend)
            }
            if version >= 5 {
                w.count(group.countedItems)
                if let since = group.countedSince, let latest = group.countedLatest {
                    time(since, &w)
                    time(latest, &w)
                }
            }
        }

        let coaching = state.coaching
        coaching.habits.write(to: &w)
        coaching.streak.write(to: &w)
        w.list(coaching.recentWorkouts) { w, start in w.signed(start.localSeconds - base.secondsSinceEpoch) }
        if version >= 2 {
            coaching.responses.write(to: &w)
        } else {
            coaching.responses.writeVersion1(to: &w)
        }
        w.list(coaching.unanswered) { w, entry in
            id(entry.id, &w)
            time(entry.firedAt, &w)
        }

        state.copy.templateMemory.write(to: &w)
        w.fixed64(state.copy.random.state)
        writeMap(state.copy.coachCopy, &w) { w, coach in
            time(coach.askedAt, &w)
            w.optional(coach.copy) { w, copy in
                w.string(copy.title)
                w.string(copy.body)
            }
        }
        if version >= 3 { writeLiveActivities(state.liveActivities, &w) }
        if version >= 7 {
            writeMap(state.plan.phoneHolds, &w) { time($1, &$0) }
            switch state.plan.lastPassPhone {
            case .atOnce: w.count(0)
            case .whenItPulls: w.count(1)
            case .by(let instant):
                w.count(2)
                time(instant, &w)
            }
        }
        if version >= 8 { w.optional(state.plan.phoneHearsBy) { time($1, &$0) } }
        if version >= 9 {
            let held = state.plan.lastKey == nil ? nil : state.plan.holdsAtLastPass
            w.optional(held) { w, holds in writeMap(holds, &w) { time($1, &$0) } }
        }
        if version >= 4 { w.bool(state.plan.deviceRefuses) }
        if version >= 6 { w.count(state.plan.localRevision) }
    }

    /// An instant as its distance from `base`: in minutes when it is a whole number of minutes
    /// (most are wall-clock times), flagged in the lowest bit.
    private func time(_ instant: Instant, _ w: inout CompactWriter) {
        let distance = instant - base
        w.signed(distance % 60 == 0 ? (distance / 60) << 1 : distance << 1 | 1)
    }

    private func id(_ id: OccurrenceID, _ w: inout CompactWriter) {
        w.signed(id.isDailySeries ? Int64.max : Int64(id.day) - baseDay)
        w.count(id.kind.ordinal)
        w.count(Int(id.packedSlot))
        w.count(Int(id.snooze))
    }

    private func writeMap<Value>(
        _ map: OccurrenceMap<Value>, _ w: inout CompactWriter, _ value: (inout CompactWriter, Value) -> Void
    ) {
        // Keys ascend: each is written as its distance from the one before (two or three bytes).
        let entries = map.entries
        w.count(entries.count)
        var previous: UInt64 = 0
        for entry in entries {
            w.unsigned(entry.id.packed - previous)
            previous = entry.id.packed
            value(&w, entry.value)
        }
    }
}
