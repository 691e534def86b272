import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@testable import engaged

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A raw TCP connection to 127.0.0.1, for what an HTTP client cannot send: half a request.
private struct RawConnection {
    let descriptor: Int32

    init(port: Int) throws {
        #if canImport(Glibc)
            descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw POSIXError(.EBADF) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(descriptor)
            throw POSIXError(.ECONNREFUSED)
        }
    }

    func send(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }

    /// Reads until the server closes the connection or `seconds` pass without a byte; returns
    /// what was read and whether the server closed it. Blocking: call it off the test pool
    /// (`offThePool`).
    func readUntilClosed(quietSeconds seconds: Int) -> (text: String, closed: Bool) {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                received += buffer[..<count]
                continue
            }
            // 0: closed; below 0: a reset (closed) or the quiet time ran out (not closed).
            let closed = count == 0 || errno == ECONNRESET
            return (String(decoding: received, as: UTF8.self), closed)
        }
    }

    func closeConnection() { close(descriptor) }
}

/// Runs blocking socket work on a thread of its own: the async test pool has as many threads as
/// cores, and a blocked one would stall every other suite's timing.
private func offThePool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(returning: work()) }
    }
}

/// A client that sends half a header, or stalls in its body, holds a connection only until the
/// idle timeout (`--idle-timeout-seconds`); the server keeps answering others meanwhile.
@Suite("engaged: idle connections")
struct IdleTimeoutTests {
    @Test(arguments: [
        "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n",  // half a header
        // A stalled body, past the API key: the route waits for the rest.
        "PUT /v1/users/ana HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(TestServer.apiKey)\r\n"
            + "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"timeZone\"",
    ])
    func aStalledRequestIsClosedAfterTheIdleTimeout(request: String) async throws {
        var server = try await TestServer()
        server.environment.idleTimeoutSeconds = 2
        try await server.run(.live) { client in
            let port = try #require(client.port)
            let stalled = try RawConnection(port: port)
            defer { stalled.closeConnection() }
            stalled.send(request)
            // Another client is answered meanwhile.
            let other = try RawConnection(port: port)
            defer { other.closeConnection() }
            other.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            let answer = await offThePool { other.readUntilClosed(quietSeconds: 30) }
            #expect(answer.text.hasPrefix("HTTP/1.1 200"), "\(answer.text)")
            // The stalled one is closed (whatever the server answered it first).
            let stalledEnd = await offThePool { stalled.readUntilClosed(quietSeconds: 30) }
            #expect(stalledEnd.closed, "\(stalledEnd.text)")
        }
    }
}
