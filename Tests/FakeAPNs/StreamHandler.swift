import NIOCore
import NIOHTTP1
import NIOHTTP2

/// One HTTP/2 stream: reads the request (as HTTP/1 parts), asks the core, writes the answer,
/// and carries out a scripted delay, GOAWAY, close or freeze.
final class StreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// Bodies past this are not kept (the answer is 413 anyway).
    static let maxBodyBytes = 64 * 1024

    let core: FakeAPNsCore
    let connection: Int
    private var head: HTTPRequestHead?
    private var body = ByteBuffer()
    private var streamID = 0

    init(core: FakeAPNsCore, connection: Int) {
        self.core = core
        self.connection = connection
    }

    func handlerAdded(context: ChannelHandlerContext) {
        core.streamOpened(connection: connection)
        streamID = (try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)).map(Int.init) ?? 0
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        core.streamClosed(connection: connection)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
        case .body(var part):
            // Past the limit a byte more is all it takes to answer 413.
            let room = Self.maxBodyBytes + 1 - body.readableBytes
            if room > 0, var kept = part.readSlice(length: min(room, part.readableBytes)) { body.writeBuffer(&kept) }
        case .end:
            guard let head else { return }
            let reply = core.answer(
                method: head.method, uri: head.uri, headers: head.headers, body: body, connection: connection,
                streamID: streamID)
            if reply.closeConnection {
                (context.channel.parent ?? context.channel).close(promise: nil)
                return
            }
            if reply.freezeConnection {
                (context.channel.parent ?? context.channel).setOption(ChannelOptions.autoRead, value: false)
                    .whenComplete { _ in }
                return
            }
            if let delay = reply.delay {
                let components = delay.components
                let nanoseconds = components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
                let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
                context.eventLoop.scheduleTask(in: .nanoseconds(nanoseconds)) {
                    let (handler, context) = loopBound.value
                    handler.respond(reply, context: context)
                }
            } else {
                respond(reply, context: context)
            }
        }
    }

    private func respond(_ reply: Reply, context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        if let id = reply.apnsID { headers.add(name: "apns-id", value: id) }
        let body = reply.body.map { ByteBuffer(string: $0) }
        if let body {
            headers.add(name: "content-type", value: "application/json")
            headers.add(name: "content-length", value: String(body.readableBytes))
        }
        let status = HTTPResponseStatus(statusCode: reply.status)
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: .http2, status: status, headers: headers))), promise: nil)
        if let body { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        if reply.goAway, let parent = context.channel.parent {
            let frame = HTTP2Frame(
                streamID: .rootStream,
                payload: .goAway(
                    lastStreamID: HTTP2StreamID(streamID), errorCode: .noError,
                    opaqueData: ByteBuffer(string: #"{"reason":"Shutdown"}"#)))
            parent.writeAndFlush(frame, promise: nil)
            // Streams up to this one are answered by now or soon; the rest were refused by the GOAWAY.
            parent.eventLoop.scheduleTask(in: .milliseconds(50)) { parent.close(promise: nil) }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

/// Closes a connection on an error (a client gone mid-handshake, a protocol error) instead of
/// letting it reach the pipeline's end.
final class ConnectionErrorHandler: ChannelInboundHandler {
    typealias InboundIn = Any

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

/// One flush per event-loop tick on a connection, below HTTP/2: the answers of a tick leave in
/// one TLS record and one write, as a busy server's do (the client has its own copy).
final class FlushCoalescer: ChannelOutboundHandler {
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

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        flushNow(context: context)
        context.close(mode: mode, promise: promise)
    }

    private func flushNow(context: ChannelHandlerContext) {
        guard flushScheduled else { return }
        flushScheduled = false
        context.flush()
    }
}
