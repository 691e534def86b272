import Foundation
import NIOCore
import NIOPosix

/// Both of the server's addresses, tried before either listener starts: a port another process
/// holds fails the start with a message naming its flag (exit 69), before the API's "listening
/// on" line, rather than a raw bind error after it.
enum ListenCheck {
    /// Exit status when an address cannot be listened on (EX_UNAVAILABLE).
    static let exitStatus: Int32 = 69

    /// Binds `host:port` as the server will (address reuse on) and lets go at once. Port 0 is
    /// always free.
    static func check(host: String, port: Int, flag: String) async throws {
        guard port != 0 else { return }
        do {
            let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
                .bind(host: host, port: port).get()
            try await channel.close()
        } catch {
            throw Serve.fail(
                "\(flag) \(port): cannot listen on \(host):\(port) (\(Self.reason(error))); "
                    + "free it or give \(flag) another port (0 picks a free one)",
                status: exitStatus)
        }
    }

    /// The system's words for a bind failure ("Address already in use"), else the error.
    static func reason(_ error: any Error) -> String {
        if let error = error as? IOError { return String(cString: strerror(error.errnoCode)) }
        return "\(error)"
    }
}
