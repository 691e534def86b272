public import Delivery
public import Engagement
import Foundation
public import Models
public import Runtime

/// What the simulated server was asked and what it sent, user by user in the order it happened:
/// the engine inputs, the dispatches of due rows, the inbox reads, every APNs request (alerts,
/// badge syncs, Live Activity pushes) and what APNs answered. Replayed through `engaged`, with
/// its transport giving the same answers, the same asks must send the same requests byte for
/// byte (the engaged tests' `ServerAgreementTests`). Off unless a run is given one
/// (`RunOptions.tape`); safe to share between shards.
public final class ServerTape: @unchecked Sendable {
    // @unchecked Sendable is safe: `entries` is only touched while holding `lock`.
    public enum Entry: Sendable {
        /// The user's engine was created at `at` (then launched: the next entry is the launch),
        /// with their phone's device token.
        case installed(UserProfile, deviceToken: String)
        /// An input applied to the user's engine, from the phone or not (`PlanSignal`).
        case input(EngineInput, from: InputSource)
        /// The user's due rows were dispatched.
        case dispatched
        /// An item of the request was opened (the earliest unread one of a daily series).
        case read(requestID: RequestID)
        /// The app was opened: everything delivered so far is read.
        case readAll
        /// The user's phone pulled the plan and was answered it (`EngineRuntime.phoneWasServed`).
        case planServed
        /// An APNs request the server sent (first attempts only).
        case sent(PushRequest)
        /// What the APNs client reported for the request of `apnsID` after its retries: the
        /// outcome a replay's transport answers for it.
        case answered(apnsID: String, PushOutcome)
    }

    private let lock = NSLock()
    private var entries: [UserID: [(entry: Entry, at: Instant)]] = [:]

    public init() {}

    func record(_ entry: Entry, of userID: UserID, at instant: Instant) {
        lock.lock()
        defer { lock.unlock() }
        entries[userID, default: []].append((entry, instant))
    }

    /// The users recorded, in id order.
    public var userIDs: [UserID] {
        lock.lock()
        defer { lock.unlock() }
        return entries.keys.sorted()
    }

    /// What happened to `userID`, in order.
    public func entries(of userID: UserID) -> [(entry: Entry, at: Instant)] {
        lock.lock()
        defer { lock.unlock() }
        return entries[userID] ?? []
    }
}
