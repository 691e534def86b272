import Content
import HeapModule
import LiveActivity
import Models

/// What happens next to one user.
enum EventKind {
    case dayStart
    case activity(ActivityKind)
    case fire
    case launch
    // Boxed: keeps `Event` small, so the heap moves pointers instead of strings.
    indirect case response(requestID: RequestID, kind: NotificationKind, action: NotificationActionID)
    case travel
    case permission(granted: Bool)
    indirect case social(SocialEvent)
    /// The coach's answer reaching the app (at most the content deadline after the request).
    indirect case content(requestID: RequestID, outcome: CoachOutcome)
    /// The end of a simulated week: the user's engagement figures for it.
    case weekEnd(week: Int)
    /// The remote channel's next step: a push due, a retry, a badge sync or an arrival.
    case remote
    /// The app reports its workout to the engine (start, an update every five minutes, end).
    indirect case liveActivity(LiveActivityEvent)
    /// The device's clock jumps by this many seconds (`DeviceClock`).
    case clockJump(bySeconds: Int32)
    /// The phone's network is back and the event it queued offline is sent: its answer names
    /// the plan's version, and the phone pulls when it differs (`Deployment.server`).
    case planPull
}

struct Event: Comparable {
    var time: Int64
    var seq: UInt64
    var user: Int32
    var kind: EventKind

    /// Sequence numbers are unique within a queue, so (time, seq) is a total order.
    static func == (a: Event, b: Event) -> Bool { a.time == b.time && a.seq == b.seq }

    static func < (a: Event, b: Event) -> Bool { a.time != b.time ? a.time < b.time : a.seq < b.seq }
}

/// A min-heap ordered by (virtual time, sequence number): equal times run in the order they
/// were scheduled, as NIO's EmbeddedEventLoop does. swift-collections' `Heap`, which ran the
/// bare loop (`BareLoopBenchmark`) faster than the binary heap this project had written itself
/// (docs/PERFORMANCE.md, "Simulation").
struct EventQueue {
    private var items = Heap<Event>()
    private var nextSeq: UInt64 = 0

    var isEmpty: Bool { items.isEmpty }
    var count: Int { items.count }

    /// The time of the last event popped: nothing may be scheduled before it.
    private(set) var now: Int64 = .min

    mutating func push(time: Int64, user: Int32, kind: EventKind) {
        precondition(time >= now, "event scheduled in the past: \(time) < \(now)")
        items.insert(Event(time: time, seq: nextSeq, user: user, kind: kind))
        nextSeq += 1
    }

    mutating func pop() -> Event? {
        guard let top = items.popMin() else { return nil }
        now = top.time
        return top
    }
}
