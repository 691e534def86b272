public import Delivery
public import Models

/// What the device must do to hold the server's plan: pure, so the rule can be read and tested
/// apart from any notification center.
///
/// The rules:
/// - only requests the kit owns (`owned`: what it placed before) are ever removed or replaced;
///   the app's own requests, and other libraries', are left alone and keep their slots;
/// - an owned request the plan no longer holds is removed; one whose content or trigger changed
///   is replaced (added again under its identifier); one that is the same is not touched, so a
///   sync that changes nothing does nothing;
/// - a one-off the device has shown already (`shown`: what `PlanSync` knows fired, from what it
///   placed and from the delivered list) is not placed again: a plan pulled after it fired may
///   still hold it, moved to a later time (a stale copy fired, then the server's moved one would
///   fire a second time). Identifiers name one occurrence and are never reused for another;
///   a daily series repeats by design and is never held back;
/// - the device holds at most `pendingLimit` (64) requests: the plan's requests fill the slots the
///   others leave, soonest first (the plan's order); those that do not fit are left out, and the
///   sync does not take the plan's version, so every later pull places what then fits.
public struct PlanReconciliation: Hashable, Sendable {
    /// Identifiers to remove from the pending list.
    public var remove: [RequestID]
    /// Requests to add (new or replaced), soonest first.
    public var add: [NotificationRequest]
    /// The plan's requests left out for want of a slot, soonest first.
    public var leftOut: [RequestID]
    /// What the kit owns after the reconciliation: the plan's requests placed.
    public var owned: Set<RequestID>

    /// The operations that turn `pending` into the plan's `entries`.
    public init(
        entries: [ServerPlan.Entry], pending: [PendingNotification], owned: Set<RequestID>, shown: Set<RequestID> = [],
        pendingLimit: Int = 64
    ) {
        // The pending requests by owner, each read once: the app's and other libraries' keep
        // their slots; the kit's own (the first of an identifier) are what it may replace.
        // Requests are compared where they lie, by index, and copied only to be added.
        var others: [RequestID] = []
        var held: [RequestID: Int] = [:]
        held.reserveCapacity(min(pending.count, owned.count))
        for index in pending.indices {
            let id = pending[index].request.identifier
            if !owned.contains(id) {
                others.append(id)
            } else if held[id] == nil {
                held[id] = index
            }
        }
        let free = max(0, pendingLimit - others.count)
        // One entry per identifier (the first, soonest); an identifier the app uses itself is
        // the app's: never replaced by the plan.
        var seen = Set(others)
        seen.reserveCapacity(others.count + entries.count)
        var placed: [Int] = []
        var placedIDs = Set<RequestID>(minimumCapacity: min(entries.count, free))
        var leftOut: [RequestID] = []
        for index in entries.indices {
            let id = entries[index].request.identifier
            guard seen.insert(id).inserted else { continue }
            if !entries[index].request.trigger.repeats, shown.contains(id) { continue }
            if placed.count < free {
                placed.append(index)
                placedIDs.insert(id)
            } else {
                leftOut.append(id)
            }
        }
        remove = held.keys.filter { !placedIDs.contains($0) }.sorted()
        add = []
        for index in placed {
            if let old = held[entries[index].request.identifier], pending[old].request == entries[index].request {
                continue
            }
            add.append(entries[index].request)
        }
        self.leftOut = leftOut
        self.owned = placedIDs
    }

    /// Whether the device already holds the plan.
    public var isEmpty: Bool { remove.isEmpty && add.isEmpty }
}
