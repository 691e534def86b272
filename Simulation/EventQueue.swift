import Content
import Models

/// What happens next to one user.
enum EventKind {
    case dayStart
    case activity(ActivityKind)
    case fire
    case launch
    // Boxed: keeps `Event` small, so the heap moves pointers instead of strings.
    indirect case response(requestID: String, kind: NotificationKind, action: NotificationActionID)
    case travel
    case permission(granted: Bool)
    indirect case social(SocialEvent)
    /// The coach's answer reaching the app (at most the content deadline after the request). The
    /// request travels with it so the simulator can ask the content module why an answer was
    /// rejected, as a value.
    indirect case content(requestID: String, request: CoachRequest, outcome: CoachOutcome)
    /// The end of a simulated week: the user's engagement figures for it.
    case weekEnd(week: Int)
}

struct Event {
    var time: Int64
    var seq: UInt64
    var user: Int32
    var kind: EventKind

    @inline(__always) func precedes(_ other: Event) -> Bool {
        time != other.time ? time < other.time : seq < other.seq
    }
}

/// A binary min-heap ordered by (virtual time, sequence number): equal times run in the
/// order they were scheduled, as NIO's EmbeddedEventLoop does.
struct EventQueue {
    private var items: [Event] = []
    private var nextSeq: UInt64 = 0

    var isEmpty: Bool { items.isEmpty }
    var count: Int { items.count }

    /// The time of the last event popped: nothing may be scheduled before it.
    private(set) var now: Int64 = .min

    mutating func push(time: Int64, user: Int32, kind: EventKind) {
        precondition(time >= now, "event scheduled in the past: \(time) < \(now)")
        items.append(Event(time: time, seq: nextSeq, user: user, kind: kind))
        nextSeq += 1
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) >> 1
            guard items[child].precedes(items[parent]) else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    mutating func pop() -> Event? {
        guard !items.isEmpty else { return nil }
        let top = items[0]
        now = top.time
        let last = items.removeLast()
        if !items.isEmpty {
            items[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1
                guard left < items.count else { break }
                let right = left + 1
                let child = right < items.count && items[right].precedes(items[left]) ? right : left
                guard items[child].precedes(items[parent]) else { break }
                items.swapAt(child, parent)
                parent = child
            }
        }
        return top
    }
}
