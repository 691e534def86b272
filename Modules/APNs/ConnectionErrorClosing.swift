import Logging
import NIOCore
import NIOHTTP2

/// Closes an HTTP/2 connection once its HTTP/2 handler reports a connection error.
///
/// On a connection error (a frame the protocol forbids, such as an answer on a stream the
/// client reset so long ago that it no longer remembers it) NIO's HTTP/2 handler sends GOAWAY,
/// stops reading the frames of that read and reports the error, leaving the close to the
/// pipeline's owner; async-http-client does not close it, and goes on opening streams on a
/// connection whose answers are no longer read. Each such push then waits out its whole
/// attempt timeout, and so does every retry, until the connection closes for another reason.
/// Closed here, the streams in flight fail at once, their pushes are retried after the short
/// back-off, and the pool opens a new connection.
///
/// A stream's own error (`NIOHTTP2Errors.StreamError`: its stream is reset, the connection is
/// fine) passes on untouched; any other error is taken as the connection's.
final class ConnectionErrorClosingHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = Any
    typealias InboundOut = Any

    private let logger: Logger
    private var closing = false

    init(logger: Logger) { self.logger = logger }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if !(error is NIOHTTP2Errors.StreamError), !closing {
            closing = true
            logger.warning("APNs connection closed after an HTTP/2 connection error", metadata: ["error": "\(error)"])
            context.close(promise: nil)
        }
        context.fireErrorCaught(error)
    }
}
