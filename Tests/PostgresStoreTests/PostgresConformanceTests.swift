import PostgresStore
import Storage
import StoreConformance
import Testing

/// Every check of every store conformance suite against `PostgresRuntimeStore`, each on a
/// database of its own. Disabled without `ENGAGED_TEST_DATABASE_URL` (`make test` starts a server).
@Suite("PostgresRuntimeStore conformance", .enabled(if: TestServer.isConfigured, TestServer.disabledReason))
struct PostgresConformanceTests {
    @Test("The PostgreSQL store keeps the EngagementStore contract", arguments: StoreConformanceCheck.allCases)
    func engagement(_ check: StoreConformanceCheck) throws {
        try ScratchDatabase.withStore { store in try checkEngagementStoreConformance({ store }, only: [check]) }
    }

    @Test("The PostgreSQL store keeps the runtime's contract", arguments: RuntimeStoreCheck.allCases)
    func runtime(_ check: RuntimeStoreCheck) throws {
        try ScratchDatabase.withStore { store in try checkRuntimeStoreConformance({ store }, only: [check]) }
    }

    @Test("The PostgreSQL store keeps the inbox's contract", arguments: InboxStoreCheck.allCases)
    func inbox(_ check: InboxStoreCheck) throws {
        try ScratchDatabase.withStore { store in try checkInboxStoreConformance({ store }, only: [check]) }
    }

    @Test("The PostgreSQL store keeps the trace contract", arguments: TraceStoreCheck.allCases)
    func trace(_ check: TraceStoreCheck) throws {
        try ScratchDatabase.withStore { store in try checkTraceStoreConformance({ store }, only: [check]) }
    }

    @Test("The PostgreSQL store keeps the user records' contract", arguments: UserRecordsCheck.allCases)
    func userRecords(_ check: UserRecordsCheck) throws {
        try ScratchDatabase.withStore { store in try checkUserRecordsConformance({ store }, only: [check]) }
    }
}
