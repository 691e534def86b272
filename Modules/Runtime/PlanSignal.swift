public import Engagement
public import Models

/// Who gives the runtime an input. It decides whether the user's phones must be told that
/// their local plan changed (`PlanSignal`).
public enum InputSource: Hashable, Sendable {
    /// The user's own phone (an event sent with the user's token): the answer carries the local
    /// plan's revision, so the phone knows at once whether to pull the plan.
    case device
    /// Anyone else: the app's backend (the API key), the server's own due work. The phone hears
    /// of a change only through the signal.
    case backend
}

/// The signal that a user's local plan changed (`GET /v1/users/{id}/plan`): when a step moves
/// `UserEngine.localPlanRevision` and did not come from the phone (a preference or zone written
/// by the backend, a regrouped digest, a background job's pass rolling the horizon, a lapse
/// campaign's step), or came from one phone of a user with several, the step commits the user's
/// badge and inbox sync row (`SilentPushPlan`). The sync is a background push to each of the
/// user's devices that carries the plan's revision beside the inbox's counts, read when it is
/// sent from the committed snapshot, so one push answers both and a phone pulls only when its
/// revision differs (the phone whose event caused it already holds it).
///
/// The signal is inside the silent budget: it asks for the same row a change of the counts
/// asks for, so it waits for the next slot (at most `SilentPushPlan.perHour` pushes an hour)
/// and coalesces with every other change before it. When the budget is spent, the change
/// waits for the next slot, never more than one slot (about half an hour); a phone that
/// does not wake for the background push (iOS delivers them at its discretion, and not to an
/// app the user force-quit) learns the revision from its next event's answer or its next pull.
/// A user's creation signals nothing: a new phone pulls the plan when it starts.
public enum PlanSignal {
    /// Whether a step from `source` that moved the local plan's revision asks for a sync;
    /// `otherDevices` says whether the user has more than the device that sent it (read only
    /// for a step from a device).
    public static func asksForSync(
        source: InputSource, otherDevices: () throws(RuntimeError) -> Bool
    ) throws(RuntimeError) -> Bool {
        switch source {
        case .backend: true
        case .device: try otherDevices()
        }
    }
}

/// What applying one input did.
public struct AppliedInput: Sendable {
    /// The engine's effects, in order.
    public var effects: [Effect]
    /// `UserEngine.localPlanRevision` after the step: what the step's answer tells the phone.
    public var localPlanRevision: Int
}

extension PhoneHearing {
    /// How the phone hears of a change a step makes at `now`, by who gave the input: the phone's
    /// own input is answered with the plan's version; anyone else's reaches it with the next
    /// sync (`SilentPushPlan.phoneHears(ofChangeAt:)`).
    public static func of(_ source: InputSource, silentPushes: SilentPushPlan, at now: Instant) -> PhoneHearing {
        source == .device ? .atOnce : .by(silentPushes.phoneHears(ofChangeAt: now))
    }
}
