import Logging
import NIOCore
import NIOHTTP2

/// When an HTTP/2 connection has heard nothing for too long with streams open, asks it for a
/// PING, and closes it when the PING's acknowledgement does not come in time.
///
/// A connection can stop answering without closing: a peer or a middlebox that lost it, or a
/// client whose HTTP/2 state broke (`ConnectionErrorClosingHandler` closes those it is told
/// of). async-http-client keeps opening streams on it, so every push and every retry waits out
/// its whole attempt timeout, and the pushes of a batch together wait for the slowest. Closed,
/// its streams fail at once, their pushes are retried, and the pool opens a new connection.
///
/// Time the client's own event loop stood still (a stopped or starved process) is not the
/// peer's silence: when a check runs late by more than a check's interval, the lateness counts
/// neither as silence nor as the PING's wait.
final class ConnectionHealthHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame
    typealias InboundOut = HTTP2Frame
    typealias OutboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    /// How long a connection with streams open may go without a frame before it is pinged, and
    /// how long the PING's acknowledgement may take.
    struct Timing: Hashable, Sendable {
        var silenceBeforePing: TimeAmount
        var pingTimeout: TimeAmount

        /// Checks run this often: a quarter of the shorter of the two, at least 10 ms.
        var checkInterval: TimeAmount {
            max(.milliseconds(10), .nanoseconds(min(silenceBeforePing, pingTimeout).nanoseconds / 4))
        }
    }

    /// The PING's 8 bytes, to know its acknowledgement from any other.
    static let pingData = HTTP2PingData(withInteger: 0x4150_4E73_4865_616C)

    private let timing: Timing
    private let logger: Logger
    private var openStreams = 0
    private var lastHeard = NIODeadline.now()
    private var lastCheck = NIODeadline.now()
    private var pingSentAt: NIODeadline?
    private var checks: RepeatedTask?

    init(timing: Timing, logger: Logger) {
        self.timing = timing
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        lastHeard = .now()
        lastCheck = lastHeard
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        checks = context.eventLoop.scheduleRepeatedTask(
            initialDelay: timing.checkInterval, delay: timing.checkInterval
        ) { _ in
            let (handler, context) = bound.value
            handler.check(context: context)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        checks?.cancel()
        checks = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        checks?.cancel()
        checks = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        lastHeard = .now()
        if case .ping(let data, ack: true) = unwrapInboundIn(data).payload, data == Self.pingData {
            pingSentAt = nil
        }
        context.fireChannelRead(data)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case is NIOHTTP2StreamCreatedEvent:
            // Silence counts from the first stream after an idle spell, not through it.
            if openStreams == 0 { lastHeard = .now() }
            openStreams += 1
        case is StreamClosedEvent: openStreams = max(0, openStreams - 1)
        default: break
        }
        context.fireUserInboundEventTriggered(event)
    }

    private func check(context: ChannelHandlerContext) {
        let now = NIODeadline.now()
        let late = now - lastCheck - timing.checkInterval
        if late > timing.checkInterval {
            // The loop itself stood still that long: the peer may have answered meanwhile, unread
            // yet, so that time counts neither as silence nor as the PING's wait.
            lastHeard = lastHeard + late
            pingSentAt = pingSentAt.map { $0 + late }
        }
        lastCheck = now
        if let sent = pingSentAt {
            if now - sent >= timing.pingTimeout {
                checks?.cancel()
                checks = nil
                logger.warning(
                    "APNs connection closed: it answered nothing, not even a PING",
                    metadata: ["streamsOpen": "\(openStreams)"])
                context.close(promise: nil)
            }
            return
        }
        guard openStreams > 0, now - lastHeard >= timing.silenceBeforePing else { return }
        pingSentAt = now
        let ping = HTTP2Frame(streamID: .rootStream, payload: .ping(Self.pingData, ack: false))
        context.writeAndFlush(wrapOutboundOut(ping), promise: nil)
    }
}
