import Testing

@testable import Simulation

@Suite struct EventQueueTests {
    /// The queue pops in (time, sequence) order: equal times in the order they were pushed.
    @Test func theQueuePopsByTimeThenInsertionOrder() {
        var queue = EventQueue()
        let times: [Int64] = [5, 3, 5, 1, 3, 9, 5, 0]
        for (index, time) in times.enumerated() { queue.push(time: time, user: Int32(index), kind: .fire) }
        var order: [Int32] = []
        while let event = queue.pop() { order.append(event.user) }
        #expect(order == [7, 3, 1, 4, 0, 2, 6, 5])
        #expect(queue.now == 9)
        #expect(queue.isEmpty)
    }

    @Test func oneDecisionInSixtyFourIsTimed() {
        var sampler = DecisionSampler()
        let timed = (0..<640).filter { _ in sampler.next() }
        #expect(timed.count == 10)
        #expect(timed.first == 0)
        #expect(timed.dropFirst().first == DecisionSampler.every)
    }
}
