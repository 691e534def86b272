import Logging
import NIOCore
import NIOHTTP2

/// Turns the flushes of one event-loop tick into one, between HTTP/2 and TLS on a connection.
///
/// async-http-client flushes a request's head, body and end separately, and each flush of the
/// HTTP/2 connection becomes a TLS record and a `write` system call: three per push. Pushes are
/// small and many; deferring the flush to the end of the tick sends every frame written in it
/// together, which is most of what a push costs the client (`make bench-apns`). Nothing waits
/// longer than the tick in progress.
final class FlushCoalescingHandler: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = Any
    typealias OutboundOut = Any

    private var flushScheduled = false

    func flush(context: ChannelHandlerContext) {
        guard !flushScheduled else { return }
        flushScheduled = true
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.execute {
            let (handler, context) = bound.value
            handler.flushNow(context: context)
        }
    }

    /// What was written goes out before the connection closes.
    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        flushNow(context: context)
        context.close(mode: mode, promise: promise)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        flushNow(context: context)
    }

    private func flushNow(context: ChannelHandlerContext) {
        guard flushScheduled else { return }
        flushScheduled = false
        context.flush()
    }

    /// Puts a coalescer just below the connection's HTTP/2 handler, and above it a
    /// `ConnectionErrorClosingHandler` and a `ConnectionHealthHandler` with `health`
    /// (async-http-client's hook for a new HTTP/2 connection).
    static func install(
        on channel: any Channel, health: ConnectionHealthHandler.Timing, logger: Logger
    ) -> EventLoopFuture<Void> {
        channel.eventLoop.makeCompletedFuture {
            let sync = channel.pipeline.syncOperations
            let http2 = try sync.handler(type: NIOHTTP2Handler.self)
            try sync.addHandler(FlushCoalescingHandler(), position: .before(http2))
            try sync.addHandler(ConnectionHealthHandler(timing: health, logger: logger), position: .after(http2))
            try sync.addHandler(ConnectionErrorClosingHandler(logger: logger), position: .after(http2))
        }
    }
}
