import ArgumentParser
import Foundation
import Logging
import PostgresStore
import Storage

/// `engaged migrate`: brings a store's schema to this build's version and exits, so a deployment
/// can run the migration once, before any server or worker starts (compose's `migrate` step).
/// `serve` and `worker` migrate at start too (under an advisory lock, so at once is safe); this
/// makes the step explicit and its failure visible. Exit status: 0 when the schema is current,
/// 64 bad usage, 74 the store cannot be opened or was migrated by a newer build.
struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create or upgrade the store's schema to this build's version, then exit.")

    @Option(name: .customLong("data-dir"), help: "Folder of the embedded SQLite store (engaged.sqlite).")
    var dataDirectory: String?

    @Option(name: .customLong("database"), help: "A PostgreSQL database, postgres://user[:password]@host[:port]/name.")
    var database: String?

    func validate() throws { try Serve.validateStoreChoice(dataDirectory: dataDirectory, database: database) }

    func run() async throws {
        // PostgreSQL's waits block their thread: one of threads of their own, not of Swift's
        // cooperative pool.
        try await DatabaseThreads(count: 1, name: "migrate", onStrayWait: Serve.logStrayWait).run {
            try await migrate()
        }
    }

    private func migrate() async throws {
        var logger = Logger(label: "engaged-migrate")
        logger.logLevel = .warning
        guard
            let opened = try await Serve.openStore(
                dataDirectory: dataDirectory, database: database, unreachable: .fail, logger: logger)
        else { return }
        do { try opened.store.checkReady() } catch {
            throw Serve.fail("the store \(opened.name) is not ready after migrating: \(error)", status: 74)
        }
        let version =
            opened.store is PostgresRuntimeStore
            ? PostgresRuntimeStore.schemaVersion : SQLiteEngagementStore.schemaVersion
        if let postgres = opened.store as? PostgresRuntimeStore { postgres.pool.close() }
        print("schema of \(opened.name) is at version \(version)")
    }
}
