import Foundation
import Logging
import NIOCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A handler on the listening socket, in front of Hummingbird's connection limit and NIO's
/// accept back-off, installed when the server starts listening (`EngagedServer.guardListener`):
/// - at most `maxPerAddress` connections open at once from one address (an IPv4 address, or an
///   IPv6 /64 as the rate limiter groups them); a connection past it is closed as soon as it is
///   accepted, before any of its bytes are read, so one client holding many half-sent requests
///   cannot take every slot of `--max-connections`. 0 turns the cap off (behind a proxy, every
///   client shares the proxy's address);
/// - an accept that fails for want of descriptors (or memory) is logged, at most once a
///   `logIntervalSeconds` with the count since; NIO's `AcceptBackoffHandler`, behind this one,
///   then waits a second before accepting again, so the listener never spins on the error.
final class ListenerGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = any Channel
    typealias InboundOut = any Channel

    let maxPerAddress: Int
    let logger: Logger
    let logIntervalSeconds: Int64
    private var openByAddress: [String: Int] = [:]
    private var refusedSinceLog = 0
    private var acceptFailuresSinceLog = 0
    private var lastRefusalLog: NIODeadline?
    private var lastAcceptFailureLog: NIODeadline?

    init(maxPerAddress: Int, logger: Logger, logIntervalSeconds: Int64 = 10) {
        self.maxPerAddress = maxPerAddress
        self.logger = logger
        self.logIntervalSeconds = logIntervalSeconds
    }

    /// Connections open from each address the cap counts (tests).
    var openConnections: [String: Int] { openByAddress }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let accepted = unwrapInboundIn(data)
        guard maxPerAddress > 0,
            let address = accepted.remoteAddress.flatMap(AddressRateLimitMiddleware<EngagedRequestContext>.bucketID)
        else {
            context.fireChannelRead(data)
            return
        }
        let open = openByAddress[address, default: 0]
        guard open < maxPerAddress else {
            // Not registered yet: closing releases its descriptor without reading anything.
            accepted.close(promise: nil)
            refused(address)
            return
        }
        openByAddress[address] = open + 1
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        accepted.closeFuture.hop(to: context.eventLoop).whenComplete { _ in bound.value.closed(address) }
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let error = error as? IOError, Self.outOfResources.contains(error.errnoCode) {
            acceptFailuresSinceLog += 1
            if due(&lastAcceptFailureLog) {
                logger.error(
                    "accept failed: no descriptor for a new connection; backing off before accepting again",
                    metadata: [
                        "error": "\(error)", "failures": "\(acceptFailuresSinceLog)",
                        "open_files_limit": "\(DescriptorBudget.openFilesLimit().soft)",
                    ])
                acceptFailuresSinceLog = 0
            }
        }
        context.fireErrorCaught(error)
    }

    /// The errors of `accept` that pass once connections close (NIO keeps the listener open).
    static let outOfResources: Set<Int32> = [EMFILE, ENFILE, ENOBUFS, ENOMEM]

    private func closed(_ address: String) {
        let open = openByAddress[address, default: 1] - 1
        openByAddress[address] = open > 0 ? open : nil
    }

    private func refused(_ address: String) {
        refusedSinceLog += 1
        guard due(&lastRefusalLog) else { return }
        logger.warning(
            "connections refused: an address is at its cap of open connections (--max-connections-per-address)",
            metadata: ["address": "\(address)", "refused": "\(refusedSinceLog)", "cap": "\(maxPerAddress)"])
        refusedSinceLog = 0
    }

    /// Whether a log line is due (none in the last `logIntervalSeconds`); marks it logged.
    private func due(_ last: inout NIODeadline?) -> Bool {
        let now = NIODeadline.now()
        if let last, now - last < .seconds(logIntervalSeconds) { return false }
        last = now
        return true
    }
}

/// The process's open-file limit against `--max-connections`: every connection holds a
/// descriptor, and the store, the logs and the outgoing clients need some too
/// (`headroom`). At start-up the soft limit is raised toward the hard one as far as the
/// connections need; if the hard limit is too low, the connection limit is lowered to fit.
enum DescriptorBudget {
    /// Descriptors kept for everything but client connections: the store (SQLite's files, or
    /// PostgreSQL's pool), the listeners, the event loops, APNs and the coach's clients.
    static let headroom = 256

    struct Limit: Equatable {
        var soft: Int
        var hard: Int
    }

    /// What start-up did, for its log line.
    enum Fit: Equatable {
        /// The soft limit already covered the connections and the headroom.
        case fits(maxConnections: Int, openFiles: Int)
        /// The soft limit was raised to cover them.
        case raised(maxConnections: Int, from: Int, to: Int)
        /// The hard limit is too low: the connection limit was lowered to what fits.
        case lowered(maxConnections: Int, from: Int, openFiles: Int)

        var maxConnections: Int {
            switch self {
            case .fits(let count, _), .raised(let count, _, _), .lowered(let count, _, _): count
            }
        }
    }

    static func openFilesLimit() -> Limit {
        var limit = rlimit()
        guard getrlimit(Self.resource, &limit) == 0 else { return Limit(soft: Int.max, hard: Int.max) }
        return Limit(soft: Self.count(limit.rlim_cur), hard: Self.count(limit.rlim_max))
    }

    /// Fits `maxConnections` under the open-file limit, raising the soft limit when that is
    /// enough (through `raise`, `setrlimit` by default).
    static func fit(
        maxConnections: Int, limit: Limit = openFilesLimit(),
        raise: (Int) -> Bool = { Self.raiseSoftLimit(to: $0) }
    ) -> Fit {
        let needed = maxConnections + headroom
        if needed <= limit.soft { return .fits(maxConnections: maxConnections, openFiles: limit.soft) }
        let target = min(needed, limit.hard)
        let reached = target > limit.soft && raise(target) ? target : limit.soft
        if needed <= reached { return .raised(maxConnections: maxConnections, from: limit.soft, to: reached) }
        // At least one connection, even under a limit smaller than the headroom.
        return .lowered(maxConnections: max(1, reached - headroom), from: maxConnections, openFiles: reached)
    }

    static func raiseSoftLimit(to soft: Int) -> Bool {
        var limit = rlimit()
        guard getrlimit(Self.resource, &limit) == 0 else { return false }
        limit.rlim_cur = rlim_t(soft)
        return setrlimit(Self.resource, &limit) == 0
    }

    private static func count(_ value: rlim_t) -> Int {
        value > rlim_t(Int.max) ? Int.max : Int(value)
    }

    #if canImport(Glibc)
        private static let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
        private static let resource = RLIMIT_NOFILE
    #endif
}
