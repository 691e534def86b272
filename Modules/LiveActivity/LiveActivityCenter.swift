public import Models

/// The app's side of ActivityKit: starting, updating and ending workout and meal Live Activities.
///
/// Contract, as ActivityKit documents it on iOS:
/// - `start` needs Live Activities enabled (`denied` otherwise), a supporting device
///   (`unsupported`) and, normally, the app in the foreground (`visibility`). It fails with
///   `targetMaximumExceeded` when the app already runs its maximum of concurrent activities and
///   with `globalMaximumExceeded` when the device shows its maximum from all apps. Ended
///   activities still on the Lock Screen do not count as running.
/// - Attributes plus content state must fit in 4 KB (`LiveActivityLimits.payloadBytes`);
///   `attributesTooLarge(bytes:)` otherwise, on `start`, `update` and `end` alike. A refused
///   call changes nothing.
/// - The identifier `start` returns is derived deterministically (from a counter), never random.
/// - An activity is active at most 8 h, then the system ends it; an ended activity stays on the
///   Lock Screen as its `DismissalPolicy` says, at most 4 h after its end (12 h in all).
/// - Past its content's `staleDate` an activity is `stale`: still shown, not removed. New
///   content with a later (or no) stale date makes it `active` again.
/// - `update` and `end` on an ended activity throw `ended`; on an identifier the center does not
///   list (never started, or already removed) they throw `notFound`.
/// - Time only comes in as parameters and never runs backwards: a call stamped earlier than
///   the latest time seen acts at that latest time.
public protocol LiveActivityCenter {
    /// Whether the user allows the app's Live Activities (ActivityAuthorizationInfo).
    var areActivitiesEnabled: Bool { get }

    /// The activities not yet removed from the Lock Screen (running, stale or ended), oldest first.
    var activities: [LiveActivitySnapshot] { get }

    /// Starts an activity at `now` and returns its identifier.
    mutating func start(
        _ attributes: LiveActivityAttributes, content: LiveActivityContent, at now: Instant
    ) throws(LiveActivityError) -> String

    /// Replaces the content of the running activity `id`.
    mutating func update(id: String, content: LiveActivityContent, at now: Instant) throws(LiveActivityError)

    /// Ends the activity `id`, optionally with final content, and leaves it on the Lock Screen as
    /// `dismissal` says.
    mutating func end(
        id: String, content: LiveActivityContent?, dismissal: DismissalPolicy, at now: Instant
    ) throws(LiveActivityError)
}
