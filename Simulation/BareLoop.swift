import Dispatch

/// The simulator's event queue with no work attached: the ceiling for events per second.
public enum BareLoopBenchmark {
    /// Pushes and pops `events` events through the shard's event queue (swift-collections' `Heap`), keeping `width` events
    /// in flight (about one per simulated user), and returns events per second.
    public static func eventsPerSecond(events: Int = 10_000_000, width: Int = 5_000) -> Double {
        var queue = EventQueue()
        var generator: UInt64 = 0x9E37_79B9_7F4A_7C15
        for user in 0..<width { queue.push(time: Int64(user), user: Int32(user), kind: .fire) }
        let started = DispatchTime.now().uptimeNanoseconds
        var processed = 0
        while processed < events, let event = queue.pop() {
            processed += 1
            generator = generator &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            queue.push(time: event.time + 1 + Int64(generator >> 52), user: event.user, kind: .fire)
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        return Double(processed) / seconds
    }
}
