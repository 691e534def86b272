import Foundation
import Models
import Storage
import StoreConformance
import Testing

@Suite("InboxStore conformance")
struct InboxStoreConformanceTests {
    @Test("The in-memory store keeps the inbox's contract", arguments: InboxStoreCheck.allCases)
    func inMemory(_ check: InboxStoreCheck) throws {
        try checkInboxStoreConformance({ InMemoryEngagementStore() }, only: [check])
    }

    @Test("The SQLite store keeps the inbox's contract", arguments: InboxStoreCheck.allCases)
    func sqlite(_ check: InboxStoreCheck) throws {
        try withTemporaryDirectory { directory in
            try checkInboxStoreConformance(
                { try SQLiteEngagementStore(path: directory.appendingPathComponent("\(check).sqlite").path) },
                only: [check])
        }
    }

    @Test("The inbox survives a reopen of the SQLite store, read-all watermark included")
    func inboxSurvivesAReopen() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("store.sqlite").path
            try checkInboxSurvivesAReopen { try SQLiteEngagementStore(path: path) }
            try SQLiteEngagementStore(path: path).checkIntegrity()
        }
    }
}
