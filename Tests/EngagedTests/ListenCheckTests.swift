import Foundation
import Testing

/// A busy `--metrics-port` or `--port` stops the start before either listener announces itself,
/// naming the flag, with exit 69.
@Suite("engaged serve with a busy port")
struct ListenCheckTests {
    /// A listening socket on 127.0.0.1 and its port; the caller closes it.
    static func holdPort() throws -> (descriptor: Int32, port: Int) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(descriptor, generic, length) == 0 && listen(descriptor, 8) == 0
                    && getsockname(descriptor, generic, &length) == 0
            }
        }
        try #require(bound, "cannot hold a port: errno \(errno)")
        return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }

    @Test(
        "A busy port exits 69 naming its flag, before the API's listening line",
        arguments: ["--metrics-port", "--port"])
    func busyPort(flag: String) async throws {
        let held = try Self.holdPort()
        defer { close(held.descriptor) }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("listen-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let other = flag == "--port" ? ["--metrics-port", "0"] : ["--port", "0"]
        let server = try EngagedProcess(["serve", "--data-dir", folder.path, flag, "\(held.port)"] + other)
        #expect(try await server.exitStatus(withinSeconds: 30) == 69)
        #expect(server.log.contains("\(flag) \(held.port): cannot listen on 127.0.0.1:\(held.port)"), "\(server.log)")
        #expect(!server.log.contains("listening on"), "\(server.log)")
    }
}
