import APNs
import Delivery
import FakeAPNs
import Foundation
import NIOCore
import NIOPosix
import Testing

/// A client whose process stood still (SIGSTOP, a suspended virtual machine) past its
/// pushes' attempt timeouts while their answers arrived: on waking, every deadline fires at
/// once and the client resets all those streams together, then reads answers on streams it
/// reset too many to remember, an HTTP/2 connection error. The client must then close that
/// connection and deliver on a new one, not send its retries and every later push into it.
@Suite("APNs client after a freeze")
struct FrozenClientTests {
    @Test func aFreezePastTheAttemptTimeoutIsFollowedByDeliveryOnANewConnection() async throws {
        // Two loops, as on the 2-core machines the workers run on: the deadlines fire on either.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let retry = RetryPolicy(maxAttempts: 4, baseDelay: .milliseconds(10), maxDelay: .milliseconds(10))
        do {
            try await Harness.with(
                retry: retry, attemptTimeout: .seconds(1), eventLoopGroup: group,
                ping: (.milliseconds(200), .milliseconds(300))
            ) { harness in
                #expect(await harness.client.send(alert(0)) == .delivered)
                // Answers held a little, so that they arrive while the client stands still.
                harness.fake.answer(token: deviceToken, with: .delay(.milliseconds(200)))
                async let outcomes = withTaskGroup(of: PushOutcome.self) { tasks in
                    for n in 1...64 { tasks.addTask { await harness.client.send(alert(n)) } }
                    return await tasks.reduce(into: []) { $0.append($1) }
                }
                // Once the fake has all 64, while their answers are held.
                while harness.fake.requestCount < 65 { try await Task.sleep(for: .milliseconds(5)) }
                // The freeze: every loop of the client stands still past the attempt timeout,
                // while the fake, on its own loop, answers.
                for loop in group.makeIterator() { loop.execute { Thread.sleep(forTimeInterval: 1.5) } }
                harness.fake.answer(token: deviceToken, with: nil)
                let done = await outcomes
                // Retried into the broken connection, every push failed after its 4 attempts;
                // closed and replaced, every one is delivered.
                #expect(done.allSatisfy { $0 == .delivered }, "\(done.filter { $0 != .delivered }.prefix(3))")
                #expect(await harness.client.send(alert(100)) == .delivered)
            }
        } catch {
            try await group.shutdownGracefully()
            throw error
        }
        try await group.shutdownGracefully()
    }

    /// The other side of it: a connection that stops answering, open. Without the PING the
    /// retries would go into it too, each waiting out the attempt timeout: an hour here, so only
    /// the PING's close lets the push through within the test's time limit.
    @Test(.timeLimit(.minutes(2)))
    func aConnectionThatStopsAnsweringIsClosedAfterAnUnansweredPing() async throws {
        let retry = RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(10), maxDelay: .milliseconds(10))
        // Loops of its own: the shared ones run the other suites' clients meanwhile.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { group.shutdownGracefully { _ in } }
        try await Harness.with(
            retry: retry, attemptTimeout: .seconds(3_600), eventLoopGroup: group,
            ping: (.milliseconds(200), .milliseconds(300))
        ) { harness in
            #expect(await harness.client.send(alert(0)) == .delivered)
            harness.fake.enqueue([.freezeConnection])
            // The silence before a PING, its timeout, TLS's close and a new connection.
            #expect(await harness.client.send(alert(1)) == .delivered)
            #expect(harness.fake.connectionCount == 2)
            #expect(harness.fake.delivered.compactMap(\.apnsID) == [uuid(0), uuid(1)])
        }
    }

    /// A connection that is busy answering is never pinged, and an idle one neither.
    @Test func aConnectionThatAnswersIsKept() async throws {
        try await Harness.with(ping: (.milliseconds(200), .milliseconds(300))) { harness in
            // Each answer held less than the silence before a PING, in a row.
            harness.fake.answer(token: deviceToken, with: .delay(.milliseconds(100)))
            for n in 1...5 { #expect(await harness.client.send(alert(n)) == .delivered) }
            try await Task.sleep(for: .milliseconds(600))
            harness.fake.answer(token: deviceToken, with: nil)
            #expect(await harness.client.send(alert(6)) == .delivered)
            #expect(harness.fake.connectionCount == 1)
        }
    }
}
