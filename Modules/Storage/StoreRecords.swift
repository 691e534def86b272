public import Models

/// The writes of one engine step, applied atomically by `EngagementStore.apply(_:)`.
///
/// Within a batch, ledger entries apply in array order; profiles and engagement states for the
/// same user apply in array order too, so the last one wins.
public struct StoreBatch: Codable, Hashable, Sendable {
    /// Profiles to insert or replace, keyed by `UserProfile.id`.
    public var profiles: [UserProfile]
    /// Activity events to append; an event already stored is skipped.
    public var activityEvents: [ActivityEvent]
    /// Ledger rows to insert or replace, keyed by (user, request ID); an entry whose
    /// idempotency key was already applied for its user is skipped.
    public var ledgerEntries: [LedgerEntry]
    /// Engagement states to insert or replace, keyed by user ID.
    public var engagementStates: [EngagementState]

    public init(
        profiles: [UserProfile] = [], activityEvents: [ActivityEvent] = [], ledgerEntries: [LedgerEntry] = [],
        engagementStates: [EngagementState] = []
    ) {
        self.profiles = profiles
        self.activityEvents = activityEvents
        self.ledgerEntries = ledgerEntries
        self.engagementStates = engagementStates
    }

    /// A batch that writes nothing; applying it succeeds and changes nothing.
    public static let empty = StoreBatch()

    public var isEmpty: Bool {
        profiles.isEmpty && activityEvents.isEmpty && ledgerEntries.isEmpty && engagementStates.isEmpty
    }

    /// The first rule the batch breaks as a `StoreError.invalidBatch`, or nil when every item is
    /// valid. Stores call it before writing anything, so an invalid batch applies nothing.
    public var validationError: StoreError? {
        func invalid(_ field: String, _ problem: String) -> StoreError { .invalidBatch(field: field, problem: problem) }
        for (index, profile) in profiles.enumerated() where profile.id.isEmpty {
            return invalid("profiles[\(index)].id", "must not be empty")
        }
        for (index, event) in activityEvents.enumerated() where event.userID.isEmpty {
            return invalid("activityEvents[\(index)].userID", "must not be empty")
        }
        for (index, entry) in ledgerEntries.enumerated() {
            if entry.userID.isEmpty { return invalid("ledgerEntries[\(index)].userID", "must not be empty") }
            if entry.requestID.isEmpty { return invalid("ledgerEntries[\(index)].requestID", "must not be empty") }
            if entry.idempotencyKey.isEmpty {
                return invalid("ledgerEntries[\(index)].idempotencyKey", "must not be empty")
            }
        }
        for (index, state) in engagementStates.enumerated() {
            if state.userID.isEmpty { return invalid("engagementStates[\(index)].userID", "must not be empty") }
            if state.lapseStage.isEmpty { return invalid("engagementStates[\(index)].lapseStage", "must not be empty") }
            if state.reEngagementAttempts < 0 {
                return invalid(
                    "engagementStates[\(index)].reEngagementAttempts", "must be >= 0, got \(state.reEngagementAttempts)"
                )
            }
        }
        return nil
    }
}

/// Where a notification request stands in its life, as the ledger records it.
public enum LedgerState: String, Codable, CaseIterable, Sendable {
    /// The planner chose it; not yet handed to the platform.
    case planned
    /// Handed to the platform, waiting for its trigger.
    case pending
    /// The platform delivered it.
    case delivered
    /// The user acted on it (an action, a tap or an explicit dismissal).
    case responded
    /// Withdrawn before delivery.
    case cancelled
}

/// One row of a user's notification ledger: the latest known state of one request.
///
/// The ledger is what "no duplicate delivery" and "why didn't I get my reminder?" are checked
/// against, so its writes must be replay-safe: `idempotencyKey` names the write itself (for
/// example `"<requestID>/delivered"`), and a key already applied for the user is a no-op.
public struct LedgerEntry: Codable, Hashable, Sendable {
    public var userID: UserID
    /// The notification request identifier (see `OccurrenceID`).
    public var requestID: RequestID
    public var kind: NotificationKind
    public var state: LedgerState
    /// When the request entered `state`.
    public var at: Instant
    /// The rule behind the state, when one decided it.
    public var reason: ReasonCode?
    /// Names this write; unique per user. A replayed write carries the same key.
    public var idempotencyKey: String

    public init(
        userID: UserID, requestID: RequestID, kind: NotificationKind, state: LedgerState, at: Instant,
        reason: ReasonCode? = nil, idempotencyKey: String
    ) {
        self.userID = userID
        self.requestID = requestID
        self.kind = kind
        self.state = state
        self.at = at
        self.reason = reason
        self.idempotencyKey = idempotencyKey
    }

    /// The conventional key for moving `requestID` into `state`: one write per transition.
    public static func transitionKey(requestID: RequestID, state: LedgerState) -> String {
        requestID.rawValue + "/" + state.rawValue
    }
}

/// How long the ledger keeps a request's row (and the idempotency keys of its writes) after the
/// user's newer writes, so that it holds recent history and not every request ever planned
/// (`EngagementStore`'s ledger retention).
public enum LedgerRetention {
    /// Past both horizons within which a row can still describe something live: the caps',
    /// which count the fire times of the last day and an hour, and the inbox's, where a grouped
    /// social notification may go out a week after it was planned (a weekly digest) and its
    /// items wait up to two more days in a daily digest when that one is blocked. Two weeks
    /// leaves days to spare.
    public static let seconds: Int64 = 14 * .secondsPerDay
    /// At most this many of a user's rows, and as many keys, are pruned by one batch: bounded
    /// work per input.
    public static let prunedPerBatch = 64
}

/// A user's place in the lapse model and the progress of a re-engagement campaign.
public struct EngagementState: Codable, Hashable, Sendable {
    public var userID: UserID
    /// The raw value of the engine's `LapseStage` (`active`, `lapsed`, `churnRisk`). Storage
    /// sits below the engine and keeps it as text so the engine can add stages without a
    /// schema change.
    public var lapseStage: String
    /// Re-engagement notifications sent in the current campaign.
    public var reEngagementAttempts: Int
    /// When the current re-engagement campaign started; nil when none is running.
    public var campaignStartedAt: Instant?
    /// An opaque marker of the engine's progress (for example the last processed input), used
    /// to resume after a crash.
    public var checkpoint: String?

    public init(
        userID: UserID, lapseStage: String, reEngagementAttempts: Int = 0, campaignStartedAt: Instant? = nil,
        checkpoint: String? = nil
    ) {
        self.userID = userID
        self.lapseStage = lapseStage
        self.reEngagementAttempts = reEngagementAttempts
        self.campaignStartedAt = campaignStartedAt
        self.checkpoint = checkpoint
    }
}
