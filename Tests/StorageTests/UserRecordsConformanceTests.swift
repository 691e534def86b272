import Foundation
import GRDB
import Models
import StoreConformance
import Testing

@testable import Storage

@Suite("User records conformance")
struct UserRecordsConformanceTests {
    @Test("The in-memory store keeps the user records' contract", arguments: UserRecordsCheck.allCases)
    func inMemory(_ check: UserRecordsCheck) throws {
        try checkUserRecordsConformance({ InMemoryEngagementStore() }, only: [check])
    }

    @Test("The SQLite store keeps the user records' contract", arguments: UserRecordsCheck.allCases)
    func sqlite(_ check: UserRecordsCheck) throws {
        try withTemporaryDirectory { directory in
            try checkUserRecordsConformance(
                { try SQLiteEngagementStore(path: directory.appendingPathComponent("\(check).sqlite").path) },
                only: [check])
        }
    }
}

@Suite("SQLite user records")
struct SQLiteUserRecordsTests {
    @Test("Versions, records and devices survive a reopen")
    func userRecordsSurviveAReopen() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("store.sqlite").path
            try checkUserRecordsSurviveAReopen { try SQLiteEngagementStore(path: path) }
            try SQLiteEngagementStore(path: path).checkIntegrity()
        }
    }

    @Test("A store of schema v2 migrates to the current version and its profiles read with the default locale")
    func aVersion2StoreMigrates() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("store.sqlite").path
            do {
                let queue = try DatabaseQueue(path: path)
                try SQLiteSchema.migrator.migrate(queue, upTo: "v2")
                try queue.write { db in
                    try db.execute(
                        sql: "INSERT INTO profile (userID, json) VALUES (?, ?)",
                        arguments: ["u1", #"{"displayName":"Ana","id":"u1","timeZone":"Europe/Berlin"}"#])
                }
                try queue.close()
            }
            let store = try SQLiteEngagementStore(path: path)
            #expect(try store.profile(id: "u1")?.locale == "en")
            #expect(try store.userVersions(userID: "u1") == nil)
            #expect(try store.devices(userID: "u1").isEmpty)
            let queue = try DatabaseQueue(path: path)
            defer { try? queue.close() }
            #expect(
                try queue.read { db in try Int.fetchOne(db, sql: "PRAGMA user_version") }
                    == SQLiteEngagementStore.schemaVersion)
        }
    }
}
