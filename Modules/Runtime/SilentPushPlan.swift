public import Models
public import Storage

/// When the badge and inbox of a user's devices are synced by a silent (background) push, and
/// the outbox row that does it.
///
/// Apple advises at most two or three background pushes an hour and throttles beyond; this
/// plan sends at most `perHour` (default 2) per device in any hour, coalesced:
/// - a sync is due at the next slot strictly after the change that asks for it; slots are
///   `slotSeconds` apart on the epoch, `(3600 + graceSeconds) / perHour` rounded up (1830 s
///   for 2), so `perHour` slot intervals cover an hour plus the grace;
/// - each slot's sync is a request of its own (`requestID(forSlot:)`): a change before the
///   slot asks for the same row again; a change once the slot has come, its sync not yet sent,
///   asks for the next slot's row beside it and never postpones it, since the phone was to hear
///   of the earlier change by that slot (`phoneHears(ofChangeAt:)`); the push carries the counts
///   and the plan's version of the moment it is sent, so one push answers every change before it;
/// - a row performed more than `graceSeconds` after its slot (a backlog after an outage) is not
///   sent then but moved to the next slot, so sends stay within their slot's grace and two
///   sends `perHour` apart are always more than an hour apart.
///
/// A row sent and completed at its slot is never pending again (outbox identity), and a change
/// after it asks for a later slot, so the plan survives restarts: it lives in the outbox only.
public struct SilentPushPlan: Hashable, Sendable {
    /// The APNs collapse identifier of every sync: a device shown several keeps the last.
    public static let collapseID = "inbox-sync"
    /// How long APNs keeps a sync for a device that is offline (`PushSends.sync`).
    public static let lifetimeSeconds: Int64 = 24 * 3_600

    public var perHour: Int
    public var graceSeconds: Int64

    /// A plan of `perHour` (1...12) background pushes per hour at most, each sent within
    /// `graceSeconds` (1...600) of its slot.
    public init(perHour: Int = 2, graceSeconds: Int64 = 60) {
        self.perHour = min(12, max(1, perHour))
        self.graceSeconds = min(600, max(1, graceSeconds))
    }

    /// `(3600 + graceSeconds) / perHour`, rounded up: `perHour` slots span an hour and the grace.
    public var slotSeconds: Int64 { (3_600 + graceSeconds + Int64(perHour) - 1) / Int64(perHour) }

    /// The first slot strictly after `instant`.
    public func slot(after instant: Instant) -> Instant {
        let seconds = instant.secondsSinceEpoch
        let next = (seconds.floorDivided(by: slotSeconds) + 1) * slotSeconds
        return Instant(secondsSinceEpoch: next)
    }

    /// How late iOS may hand a sync to the app after its slot's grace: a background push goes at
    /// priority 5, which the device takes at its next power window, a quarter of an hour apart
    /// at most as this plan assumes.
    public static let deliveryWindowSeconds: Int64 = 15 * 60

    /// When a phone that is online and woken by the sync hears of a change made at `now`: the
    /// next slot, its grace and the delivery window (`UserEngine.handle`'s `PhoneHearing.by`).
    public func phoneHears(ofChangeAt now: Instant) -> Instant {
        slot(after: now) + graceSeconds + Self.deliveryWindowSeconds
    }

    /// Whether a sync row due at `dueAt` may still be sent at `now`.
    public func isSendable(dueAt: Instant, at now: Instant) -> Bool { now - dueAt <= graceSeconds }

    /// Whether the sync `row` may still be sent at `now`: within the grace of its slot, which is
    /// after its due instant for an early sync (`earlyRows`).
    public func isSendable(_ row: OutboxRow, at now: Instant) -> Bool {
        isSendable(dueAt: max(row.dueAt, Self.slot(of: row.requestID) ?? row.dueAt), at: now)
    }

    /// The sync row of `userID` that follows `row`, a sync that did not go (failed, or past its
    /// grace) at `now`: the next slot after now and after `row`'s own slot, whose key it holds.
    public func row(for userID: UserID, following row: OutboxRow, at now: Instant) -> OutboxRow {
        self.row(for: userID, changedAt: max(now, Self.slot(of: row.requestID) ?? now))
    }

    /// The sync row of `userID` for a change at `now`.
    public func row(for userID: UserID, changedAt now: Instant) -> OutboxRow {
        row(for: userID, dueAt: slot(after: now))
    }

    /// The sync row of `userID` at the slot `dueAt`.
    public func row(for userID: UserID, dueAt: Instant) -> OutboxRow {
        let requestID = Self.requestID(forSlot: dueAt)
        return OutboxRow(
            key: OutboxKey.make(userID, requestID, dueAt, .silent), userID: userID, requestID: requestID,
            dueAt: dueAt, payload: .sync)
    }

    /// The request of the sync at the slot `dueAt` (`inbox-sync-` and the slot's epoch seconds):
    /// one per slot, so a later slot's row never replaces a pending earlier one.
    public static func requestID(forSlot dueAt: Instant) -> RequestID {
        RequestID(rawValue: "\(collapseID)-\(dueAt.secondsSinceEpoch)")
    }

    /// The slot a sync's request names (`requestID(forSlot:)`); nil for any other request.
    public static func slot(of requestID: RequestID) -> Instant? {
        let text = requestID.rawValue
        guard text.hasPrefix(collapseID + "-"), let seconds = Int64(text.dropFirst(collapseID.count + 1)) else {
            return nil
        }
        return Instant(secondsSinceEpoch: seconds)
    }
}
