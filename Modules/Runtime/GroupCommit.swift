import Dispatch
import Models
import Storage
import Synchronization

/// Writes the runtime's commits in groups (group commit): while one group is being written,
/// commits queue up, and the next group takes all of them (at most `maxGroupSize`), in arrival
/// order, in one transaction. One write and one fsync then serve many concurrent inputs, and a
/// single input still waits for exactly one write.
///
/// Order: commits are written in the order `commit` was called, which is the order in which the
/// runtime computed them; a user's steps therefore reach the store in the order they happened.
///
/// Failure: a group whose transaction fails fails each of its commits (nothing of it was
/// written). A commit is *derived* from a failed one when it is a later step of the same user
/// computed on an engine loaded before the failure (`basedOn < failed`): it carries the failed
/// step's changes, so it is refused too, whether it was already queued or arrives later, until
/// the runtime has dropped its cached engine and loaded the committed one again.
final class GroupCommit: Sendable {
    /// One commit and where it stands in the runtime's sequence of steps.
    struct Entry: Sendable {
        var commit: RuntimeCommit
        /// The runtime's number for this step (increasing).
        var sequence: UInt64
        /// The number at which the engine this step started from was loaded from the store.
        var basedOn: UInt64
    }

    private struct Waiting {
        var entry: Entry
        var continuation: CheckedContinuation<StoreError?, Never>
    }

    private struct State {
        var waiting: [Waiting] = []
        var writing = false
        /// The group being written, until its transaction ends (the same array: nothing copied).
        var inFlight: [Waiting] = []
        /// The newest failed step of each user that had one.
        var lastFailure: [UserID: UInt64] = [:]
        /// Everything up to this step has been written or has failed.
        var settledThrough: UInt64 = 0
        var settleWaiters: [(sequence: UInt64, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Mutex(State())
    private let store: any RuntimeStore
    private let queue = DispatchQueue(label: "EngagementEngine.GroupCommit")
    let maxGroupSize: Int

    init(store: any RuntimeStore, maxGroupSize: Int = 256) {
        self.store = store
        self.maxGroupSize = max(1, maxGroupSize)
    }

    /// Writes `entry` with the next group; returns when it is written, or throws why not.
    /// Runs on the caller's executor up to the queueing (`nonisolated(nonsending)`), so an
    /// actor's commits are queued in the order it made them.
    nonisolated(nonsending) func commit(_ entry: Entry) async throws(StoreError) {
        // A commit that breaks a rule fails alone instead of failing its whole group.
        if let error = entry.commit.validationError { throw error }
        let error: StoreError? = await withCheckedContinuation { continuation in
            enum Next { case write, wait, refuse }
            let next = state.withLock { state -> Next in
                if let failed = state.lastFailure[entry.commit.userID], entry.basedOn < failed { return .refuse }
                state.waiting.append(Waiting(entry: entry, continuation: continuation))
                guard !state.writing else { return .wait }
                state.writing = true
                return .write
            }
            switch next {
            case .refuse: continuation.resume(returning: Self.derivedFromFailure(entry.commit.userID))
            case .write: queue.async { self.writeGroups() }
            case .wait: break
            }
        }
        if let error { throw error }
    }

    /// Returns once every commit with a sequence up to `sequence` was written or failed.
    func settled(through sequence: UInt64) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state in
                if state.settledThrough >= sequence || (state.waiting.isEmpty && !state.writing) { return true }
                state.settleWaiters.append((sequence, continuation))
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// Commits queued behind the group being written.
    var waitingCount: Int { state.withLock { $0.waiting.count } }

    /// The outbox rows of `userID`'s commits not yet written (queued, or in the group being
    /// written): what a read of the store cannot see yet.
    func unwrittenRows(of userID: UserID) -> [OutboxRow] {
        state.withLock { state in
            (state.inFlight + state.waiting).filter { $0.entry.commit.userID == userID }.flatMap(\.entry.commit.outbox)
        }
    }

    static func derivedFromFailure(_ userID: UserID) -> StoreError {
        .unavailable("an earlier change of user \"\(userID)\" failed to commit; this one built on it and was refused")
    }

    /// The writer: runs on `queue`, one group after another while commits wait.
    private func writeGroups() {
        while true {
            let group = state.withLock { state -> [Waiting] in
                if state.waiting.isEmpty { state.writing = false }
                let count = min(maxGroupSize, state.waiting.count)
                let group = Array(state.waiting.prefix(count))
                state.waiting.removeFirst(count)
                state.inFlight = group
                return group
            }
            if group.isEmpty { break }  // idle: the next commit starts a writer again
            var refused: [Waiting] = []
            var failure: StoreError?
            do {
                try store.commitGroup(group.map(\.entry.commit))
            } catch {
                failure = error
                refused = state.withLock { state in
                    for waiting in group {
                        let userID = waiting.entry.commit.userID
                        state.lastFailure[userID] = max(state.lastFailure[userID] ?? 0, waiting.entry.sequence)
                    }
                    let derived = state.waiting.filter { waiting in
                        state.lastFailure[waiting.entry.commit.userID].map { waiting.entry.basedOn < $0 } ?? false
                    }
                    state.waiting.removeAll { waiting in
                        state.lastFailure[waiting.entry.commit.userID].map { waiting.entry.basedOn < $0 } ?? false
                    }
                    return derived
                }
            }
            state.withLock { $0.inFlight = [] }
            for waiting in group { waiting.continuation.resume(returning: failure) }
            for waiting in refused {
                waiting.continuation.resume(returning: Self.derivedFromFailure(waiting.entry.commit.userID))
            }
            settle(through: group.last?.entry.sequence ?? 0)
        }
        settle(through: 0)
    }

    private func settle(through sequence: UInt64) {
        let ready = state.withLock { state in
            state.settledThrough = max(state.settledThrough, sequence)
            let idle = state.waiting.isEmpty && !state.writing
            let ready = state.settleWaiters.filter { idle || $0.sequence <= state.settledThrough }
            state.settleWaiters.removeAll { idle || $0.sequence <= state.settledThrough }
            return ready
        }
        for waiter in ready { waiter.continuation.resume() }
    }
}
