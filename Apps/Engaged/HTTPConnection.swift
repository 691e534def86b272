import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

/// Hummingbird's HTTP/1 channel with the server's connection rules added in front of it, in
/// NIO's own HTTP/1 types (before they become Swift HTTP types):
/// - a request's head must arrive within `headerTimeoutSeconds` of its first byte (408, then
///   closed): a client that trickles a header cannot hold a connection for the whole idle
///   timeout, each byte restarting it. A connection that sends nothing at all is the idle
///   timeout's, as is a quiet one between requests (a client may connect before it knows what
///   to ask);
/// - a `Transfer-Encoding` other than `chunked` alone is 501 (RFC 9112 section 6.1: the server
///   decodes no other coding), then closed;
/// - a request NIO's parser refuses is a problem body (400, or 431 for a header too large), then
///   closed, where Hummingbird would send an empty 400;
/// - an HTTP/1.0 request without `Connection: keep-alive`, or any with `Connection: close`, is
///   closed once its answer is written, which says `Connection: close`.
struct EngagedHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value

    let base: HTTP1Channel
    let headerTimeoutSeconds: Int64

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let headerTimeout = TimeAmount.seconds(headerTimeoutSeconds)
        return base.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let pipeline = channel.pipeline.syncOperations
            let decoder = try pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try pipeline.addHandler(RequestBytesObserver(), position: .first)
            try pipeline.addHandler(HTTP1EdgeHandler(headerTimeout: headerTimeout), position: .after(decoder))
            return value
        }.flatMapErrorThrowing { error in
            // A channel whose setup failed is never registered: closing it releases its descriptor.
            channel.close(promise: nil)
            throw error
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

/// Tells the handlers behind the parser that bytes of a request arrived (the parser says
/// nothing until a whole head has): the first byte of a request starts its header deadline.
final class RequestBytesObserver: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// The event `HTTP1EdgeHandler` receives before each read's bytes reach the parser.
    struct BytesArrived {}

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireUserInboundEventTriggered(BytesArrived())
        context.fireChannelRead(data)
    }
}

/// The rules of `EngagedHTTP1Channel`, between NIO's request parser and Hummingbird's codec.
/// Requests in flight are counted (heads read against answers ended), so that a refusal is
/// written only between answers, never inside one.
final class HTTP1EdgeHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// What becomes of the connection once a request is answered.
    enum AfterAnswer {
        case keepOpen
        /// An HTTP/1.0 request with `Connection: keep-alive`: the answer says it too.
        case keepOpenSaidSo
        case close
    }

    private let headerTimeout: TimeAmount
    private var headerDeadline: Scheduled<Void>?
    /// Heads passed on, and answers ended: a request is in flight while they differ.
    private var headsRead = 0
    private var answersEnded = 0
    /// Whether a request's body is being read (its head passed on, its `.end` not yet).
    private var readingBody = false
    /// For each request in flight, oldest first: what follows its answer.
    private var afterAnswers: [AfterAnswer] = []
    /// Set once the connection is being refused: nothing more is read or passed on.
    private var refusing = false
    /// A refusal waiting for the answers in flight to end.
    private var pendingRefusal: Problem?

    init(headerTimeout: TimeAmount) {
        self.headerTimeout = headerTimeout
    }

    private var inFlight: Bool { headsRead > answersEnded }

    func channelInactive(context: ChannelHandlerContext) {
        headerDeadline?.cancel()
        headerDeadline = nil
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is RequestBytesObserver.BytesArrived else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        // Bytes that are not a body being read start a head: its deadline runs from now.
        if !readingBody { armHeaderDeadline(context: context) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refusing else { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            headerDeadline?.cancel()
            headerDeadline = nil
            if let problem = Self.refusal(of: head) {
                refuse(problem, context: context)
                return
            }
            headsRead += 1
            readingBody = true
            afterAnswers.append(
                !head.isKeepAlive ? .close : head.version == .http1_0 ? .keepOpenSaidSo : .keepOpen)
        case .body:
            break
        case .end:
            readingBody = false
        }
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A parse error inside a body reaches the route, which reads the body (400 there).
        guard let parserError = error as? HTTPParserError, !readingBody else {
            context.fireErrorCaught(error)
            return
        }
        refuse(Self.problem(parserError), context: context)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head):
            switch afterAnswers.first {
            case .close?: head.headers.replaceOrAdd(name: "connection", value: "close")
            case .keepOpenSaidSo?: head.headers.replaceOrAdd(name: "connection", value: "keep-alive")
            case .keepOpen?, nil: break
            }
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .end:
            answersEnded += 1
            let after = afterAnswers.isEmpty ? AfterAnswer.keepOpen : afterAnswers.removeFirst()
            if after == .close {
                let written = promise ?? context.eventLoop.makePromise(of: Void.self)
                context.writeAndFlush(data, promise: written)
                closeOnceWritten(written.futureResult, context: context)
            } else if let pending = pendingRefusal, !inFlight {
                pendingRefusal = nil
                context.write(data, promise: promise)
                writeRefusal(pending, context: context)
            } else {
                context.write(data, promise: promise)
            }
        case .body:
            context.write(data, promise: promise)
        }
    }

    /// Answers `problem` and closes, now or once the answers in flight have ended.
    private func refuse(_ problem: Problem, context: ChannelHandlerContext) {
        guard !refusing else { return }
        refusing = true
        headerDeadline?.cancel()
        headerDeadline = nil
        if inFlight {
            pendingRefusal = problem
        } else {
            writeRefusal(problem, context: context)
        }
    }

    private func writeRefusal(_ problem: Problem, context: ChannelHandlerContext) {
        let body = JSONBody.encode(problem)
        var headers = HTTPHeaders([
            ("content-type", Problem.mediaType), ("content-length", String(body.count)), ("connection", "close"),
        ])
        if let allow = problem.allow { headers.add(name: "allow", value: allow) }
        let head = HTTPResponseHead(
            version: .http1_1, status: HTTPResponseStatus(statusCode: problem.status.code), headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: body)))), promise: nil)
        let written = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: written)
        closeOnceWritten(written.futureResult, context: context)
    }

    private func closeOnceWritten(_ written: EventLoopFuture<Void>, context: ChannelHandlerContext) {
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        written.whenComplete { _ in bound.value.close(promise: nil) }
    }

    private func armHeaderDeadline(context: ChannelHandlerContext) {
        guard headerDeadline == nil, !refusing else { return }
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        let seconds = headerTimeout.nanoseconds / 1_000_000_000
        headerDeadline = context.eventLoop.scheduleTask(in: headerTimeout) {
            let (handler, context) = bound.value
            handler.headerDeadline = nil
            handler.refuse(
                .requestTimeout("the request's head did not arrive within \(seconds) seconds"), context: context)
        }
    }

    /// What the head asks that the server refuses before any route: a transfer coding it does
    /// not decode.
    static func refusal(of head: HTTPRequestHead) -> Problem? {
        let codings = head.headers[canonicalForm: "transfer-encoding"].map { $0.lowercased() }
        guard codings.isEmpty || codings == ["chunked"] else {
            return Problem(
                slug: "not-implemented", title: "Not implemented", status: .notImplemented,
                detail: "Transfer-Encoding \(codings.joined(separator: ", ").prefix(64)) is not supported; "
                    + "send the body with Content-Length, or chunked alone")
        }
        return nil
    }

    /// The problem of a request NIO's parser refused.
    static func problem(_ error: HTTPParserError) -> Problem {
        switch error {
        case .headerOverflow:
            return Problem(
                slug: "header-too-large", title: "Request header fields too large",
                status: .requestHeaderFieldsTooLarge, detail: "the request's header is larger than this server reads")
        default:
            return .badRequest("the request is not valid HTTP/1.1 (\(error)); the connection is closed")
        }
    }
}
