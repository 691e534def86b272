import Foundation
import Logging
import NIOCore
import NIOEmbedded
import Synchronization
import TestSupport
import Testing

@testable import engaged

#if canImport(Glibc)
    import Glibc
#endif

/// Log lines kept in memory, for what the server says.
final class KeptLog: LogHandler, @unchecked Sendable {
    let lines = Mutex<[(level: Logger.Level, message: String, metadata: Logger.Metadata)]>([])
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(
        level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String, file: String,
        function: String, line: UInt
    ) {
        let merged = self.metadata.merging(metadata ?? [:]) { $1 }
        lines.withLock { $0.append((level, message.description, merged)) }
    }

    var logger: Logger { Logger(label: "kept") { _ in self } }

    func messages(containing text: String) -> [(level: Logger.Level, message: String, metadata: Logger.Metadata)] {
        lines.withLock { $0.filter { $0.message.contains(text) } }
    }
}

/// `--max-connections` against the open-file limit, and the listener when descriptors run out.
@Suite("engaged: file descriptors")
struct DescriptorTests {
    @Test(arguments: [
        // Fits as it is.
        (
            4_096, DescriptorBudget.Limit(soft: 20_000, hard: 20_000), true,
            DescriptorBudget.Fit.fits(maxConnections: 4_096, openFiles: 20_000)
        ),
        // The soft limit is raised as far as needed.
        (4_096, .init(soft: 1_024, hard: 65_536), true, .raised(maxConnections: 4_096, from: 1_024, to: 4_352)),
        // The hard limit is too low: the connection limit is lowered to fit under it.
        (4_096, .init(soft: 1_024, hard: 2_048), true, .lowered(maxConnections: 1_792, from: 4_096, openFiles: 2_048)),
        (4_096, .init(soft: 512, hard: 512), true, .lowered(maxConnections: 256, from: 4_096, openFiles: 512)),
        // Raising refused (a container's policy): lowered under the soft limit.
        (4_096, .init(soft: 1_024, hard: 65_536), false, .lowered(maxConnections: 768, from: 4_096, openFiles: 1_024)),
        // Never below one connection.
        (100, .init(soft: 64, hard: 64), true, .lowered(maxConnections: 1, from: 100, openFiles: 64)),
    ])
    func maxConnectionsFitsUnderTheOpenFileLimit(
        maxConnections: Int, limit: DescriptorBudget.Limit, raiseAllowed: Bool, expected: DescriptorBudget.Fit
    ) {
        #expect(
            DescriptorBudget.fit(maxConnections: maxConnections, limit: limit, raise: { _ in raiseAllowed }) == expected
        )
    }

    /// A failed accept for want of descriptors is logged once per interval with the count, and
    /// passed on to NIO's back-off, which holds the next accept for a second.
    @Test func anAcceptThatRunsOutOfDescriptorsIsLoggedAndPassedToTheBackOff() throws {
        let log = KeptLog()
        let channel = EmbeddedChannel()
        let passedOn = ErrorsPassedOn()
        try channel.pipeline.syncOperations.addHandler(ListenerGuard(maxPerAddress: 64, logger: log.logger))
        try channel.pipeline.syncOperations.addHandler(passedOn)
        for _ in 0..<3 { channel.pipeline.fireErrorCaught(IOError(errnoCode: EMFILE, reason: "accept")) }
        let lines = log.messages(containing: "accept failed")
        #expect(lines.count == 1)
        #expect(lines.first?.level == .error)
        #expect(passedOn.count == 3)
        _ = try? channel.finish()
    }

    /// The per-address cap at the listener: past it, an accepted connection is closed before the
    /// server reads it, and a closed one frees its slot; other addresses are not touched.
    @Test func theListenerClosesConnectionsPastTheCapOfTheirAddress() throws {
        let log = KeptLog()
        let listener = EmbeddedChannel()
        let guardHandler = ListenerGuard(maxPerAddress: 2, logger: log.logger)
        try listener.pipeline.syncOperations.addHandler(guardHandler)
        func accept(_ address: String) throws -> EmbeddedChannel {
            let child = EmbeddedChannel(loop: listener.embeddedEventLoop)
            child.remoteAddress = try SocketAddress(ipAddress: address, port: 40_000)
            try child.connect(to: child.remoteAddress!).wait()
            listener.pipeline.fireChannelRead(NIOAny(child as any Channel))
            return child
        }
        let first = try accept("127.0.0.1")
        let second = try accept("127.0.0.1")
        let third = try accept("127.0.0.1")
        let other = try accept("127.0.0.2")
        let sameSlash64 = try accept("2001:db8::1")
        let sameSlash64Again = try accept("2001:db8::2")
        let sameSlash64Third = try accept("2001:db8::3:4")
        listener.embeddedEventLoop.run()
        #expect(first.isActive && second.isActive && other.isActive)
        #expect(!third.isActive)
        #expect(sameSlash64.isActive && sameSlash64Again.isActive && !sameSlash64Third.isActive)
        #expect(guardHandler.openConnections["127.0.0.1"] == 2)
        #expect(log.messages(containing: "connections refused").count == 1)
        _ = try first.close().wait()
        listener.embeddedEventLoop.run()
        #expect(guardHandler.openConnections["127.0.0.1"] == 1)
        let fourth = try accept("127.0.0.1")
        #expect(fourth.isActive)
        _ = try? listener.finish()
    }

    /// The run, as an operator would: `ulimit -n 512` and 800 half-open connections.
    /// Start-up lowers `--max-connections` under the limit and says so; the connections past it
    /// wait in the backlog while the server sits idle (no spinning), and once the header
    /// deadline frees the slots a new client is answered.
    @Test func underALowOpenFileLimitTheServerFitsAndNeverSpins() async throws {
        let server = try EngagedProcess(
            [
                "serve", "--data-dir",
                FileManager.default.temporaryDirectory.appendingPathComponent(
                    "engaged-fd-\(UUID().uuidString)"
                ).path, "--port", "0", "--metrics-port", "0", "--max-connections-per-address", "0",
                "--header-timeout-seconds", "2",
            ], openFiles: 512)
        let port = try #require(try await server.port(), "\(server.log)")
        #expect(server.log.contains("lowered --max-connections"), "\(server.log)")
        #expect(server.log.contains("max_connections=256"), "\(server.log)")
        let held = await offThePool {
            (0..<800).compactMap { _ -> RawConnection? in
                guard let connection = try? RawConnection(port: port, timeoutSeconds: 2) else { return nil }
                connection.send("GET /healthz HTTP/1.1\r\nHost: t\r\n")
                return connection
            }
        }
        #expect(held.count >= 700, "\(held.count) connections opened")
        let cpuBefore = server.cpuSeconds
        try? await Task.sleep(for: .seconds(3))
        let cpuAfter = server.cpuSeconds
        held.forEach { $0.closeConnection() }  // once, here: a descriptor closed twice may be another's
        let cpuUsed = (cpuAfter ?? .infinity) - (cpuBefore ?? 0)
        #expect(cpuUsed < 1.0, "\(cpuUsed) s of CPU in 3 s with the connections waiting")
        let probe = try RawConnection(port: port, timeoutSeconds: 30)
        defer { probe.closeConnection() }
        probe.send("GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        let answer = await offThePool { probe.readUntilClosed(quietSeconds: 30) }
        #expect(answer.text.hasPrefix("HTTP/1.1 200"), "\(answer.text)\n\(server.log.suffix(2_000))")
        server.process.terminate()
        #expect(try await server.exitStatus() != nil)
    }
}

/// Counts the errors that reach it.
final class ErrorsPassedOn: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = Any
    var count = 0

    func errorCaught(context: ChannelHandlerContext, error: any Error) { count += 1 }
}
