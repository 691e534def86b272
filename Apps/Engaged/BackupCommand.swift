import ArgumentParser
import Foundation
import Storage

/// `engaged backup`: a consistent copy of the embedded SQLite store while `engaged serve` runs
/// on it (SQLite's online backup). Restore by stopping the server and putting the copy in a data
/// directory as `engaged.sqlite`. PostgreSQL has its own tools (`pg_dump`, base backups). Exit
/// status: 0 when the copy is written and passes `integrity_check`, 64 bad usage, 73 the
/// destination exists, 74 the store cannot be read or the copy cannot be written.
struct Backup: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy the embedded SQLite store to a file while the server runs.",
        discussion: """
            The copy holds every batch committed before the backup began and none after. It is written \
            beside --to and renamed into place when whole and checked. Restore: stop the server, put the \
            copy in a data directory as engaged.sqlite, start the server on that directory.
            """)

    @Option(name: .customLong("data-dir"), help: "Folder of the store (engaged.sqlite).")
    var dataDirectory: String

    @Option(name: .customLong("to"), help: "The backup file to write; it must not exist.")
    var destination: String

    func validate() throws {
        guard !dataDirectory.isEmpty else { throw ValidationError("--data-dir must not be empty") }
        guard !destination.isEmpty else { throw ValidationError("--to must not be empty") }
    }

    func run() throws {
        let source = dataDirectory + "/engaged.sqlite"
        do {
            try SQLiteEngagementStore.backup(storeAt: source, to: destination)
        } catch .destinationExists {
            throw Serve.fail("\(destination) exists; a backup never replaces a file", status: 73)
        } catch {
            throw Serve.fail("the backup of \(source) to \(destination) failed: \(error)", status: 74)
        }
        print("backed up \(source) to \(destination)")
    }
}
