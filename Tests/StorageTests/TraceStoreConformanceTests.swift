import Foundation
import GRDB
import Models
import StoreConformance
import Testing

@testable import Storage

@Suite("TraceStore conformance")
struct TraceStoreConformanceTests {
    @Test("The in-memory store keeps the trace contract", arguments: TraceStoreCheck.allCases)
    func inMemory(_ check: TraceStoreCheck) throws {
        try checkTraceStoreConformance({ InMemoryEngagementStore() }, only: [check])
    }

    @Test("The SQLite store keeps the trace contract", arguments: TraceStoreCheck.allCases)
    func sqlite(_ check: TraceStoreCheck) throws {
        try withTemporaryDirectory { directory in
            try checkTraceStoreConformance(
                { try SQLiteEngagementStore(path: directory.appendingPathComponent("\(check).sqlite").path) },
                only: [check])
        }
    }

    @Test("The SQLite store's trace survives a reopen")
    func sqliteTraceSurvivesAReopen() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("store.sqlite").path
            try checkTraceSurvivesAReopen { try SQLiteEngagementStore(path: path) }
        }
    }

}
