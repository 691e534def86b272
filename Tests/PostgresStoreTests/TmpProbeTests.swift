import PostgresNIO
import PostgresStore
import Testing

@Suite("TmpProbe", .enabled(if: TestServer.isConfigured))
struct TmpProbeTests {
    @Test func probe() throws {
        try ScratchDatabase.with { database in
            let bytes: [UInt8] = [1, 2, 255]
            do {
                let rows = try database.query("SELECT pg_typeof(\(bytes))::text")
                print("PROBE [UInt8] binds as", try rows.first.map { try $0.decode(String.self) } ?? "?")
            } catch { print("PROBE [UInt8] bind failed:", String(reflecting: error)) }
            let pool = database.makePool(size: 1)
            defer { pool.close() }
            do {
                try pool.withConnection { c in try PostgresPool.run("SELECT 1; SELECT 2", on: c, logger: TestServer.logger) }
                print("PROBE multi-statement run OK")
            } catch { print("PROBE multi-statement run failed:", error) }
        }
    }
}
