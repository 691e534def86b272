import Hummingbird

/// The first answers to requests that carried an `Idempotency-Key`, per user and key.
///
/// Held in memory only, bounded by `maxEntries` and `maxBodyBytes` (the oldest entry goes first):
/// a retry is recognised while the process lives and its entry has not been evicted; after a
/// restart, or past the bound, a repeated key is a new request. Only accepted (2xx) answers are
/// kept: a refused request changed nothing, so sending it again is safe and may now succeed.
/// Bodies are compared byte for byte.
actor IdempotencyCache {
    struct Answer: Sendable, Equatable {
        var status: HTTPResponse.Status
        var body: [UInt8]
    }

    enum Lookup: Sendable, Equatable {
        /// No answer yet: the caller performs the request and then calls `finish`.
        case fresh
        /// The same key and body were answered before: send this again.
        case replay(Answer)
        /// The key was used with another body, or the first request with it is still running.
        case conflict(String)
    }

    private struct Slot: Hashable {
        var userID: String
        var key: String
    }

    private struct Entry {
        var body: [UInt8]
        /// Nil while the first request with the key is running.
        var answer: Answer?
        /// Position in `order`: a slot forgotten and used again is evicted through its latest one.
        var sequence: Int
    }

    let maxEntries: Int
    let maxBodyBytes: Int
    private var entries: [Slot: Entry] = [:]
    /// Insertion order, for eviction; positions before `head` are gone.
    private var order: [(slot: Slot, sequence: Int)] = []
    private var head = 0
    private var nextSequence = 0
    private var bodyBytes = 0

    init(maxEntries: Int = 10_000, maxBodyBytes: Int = 32 * 1024 * 1024) {
        self.maxEntries = max(1, maxEntries)
        self.maxBodyBytes = max(1, maxBodyBytes)
    }

    var count: Int { entries.count }

    /// Looks the key up; a fresh key is marked running until `finish`.
    func begin(userID: String, key: String, body: [UInt8]) -> Lookup {
        let slot = Slot(userID: userID, key: key)
        if let entry = entries[slot] {
            guard let answer = entry.answer else {
                return .conflict("a request with this Idempotency-Key is still being processed")
            }
            return entry.body == body
                ? .replay(answer) : .conflict("the Idempotency-Key was used with a different body")
        }
        entries[slot] = Entry(body: body, answer: nil, sequence: nextSequence)
        order.append((slot, nextSequence))
        nextSequence += 1
        bodyBytes += body.count
        evict()
        return .fresh
    }

    /// Keeps `answer` for the key when it is an accepted answer; forgets the key otherwise.
    func finish(userID: String, key: String, answer: Answer) {
        let slot = Slot(userID: userID, key: key)
        guard let entry = entries[slot] else { return }  // evicted while running: nothing to keep
        if (200..<300).contains(answer.status.code) {
            entries[slot]?.answer = answer
        } else {
            entries[slot] = nil
            bodyBytes -= entry.body.count
        }
    }

    /// Drops the oldest entries until both bounds hold. A running entry may go too: its request
    /// still completes, its answer is just not kept.
    private func evict() {
        while entries.count > maxEntries || bodyBytes > maxBodyBytes, head < order.count {
            let (slot, sequence) = order[head]
            head += 1
            if let entry = entries[slot], entry.sequence == sequence {
                entries[slot] = nil
                bodyBytes -= entry.body.count
            }
        }
        // Positions of forgotten keys pile up without evictions: compact before they pass the bound.
        if head > 1_024 || order.count - head > 2 * maxEntries {
            order = order[head...].filter { entries[$0.slot]?.sequence == $0.sequence }
            head = 0
        }
    }
}
