import PostgresStore
import Storage
import StoreConformance
import Testing

/// The social ids' and the ledger retention's checks against `PostgresRuntimeStore`, each on a
/// database of its own. Disabled without `ENGAGED_TEST_DATABASE_URL` (`make test` starts a server).
@Suite("PostgresRuntimeStore social ids", .enabled(if: TestServer.isConfigured, TestServer.disabledReason))
struct PostgresSocialRetentionTests {
    @Test(
        "The PostgreSQL store keeps the social ids' and the ledger retention's contract",
        arguments: SocialRetentionCheck.allCases)
    func socialRetention(_ check: SocialRetentionCheck) throws {
        try ScratchDatabase.withStore { store in try checkSocialRetentionConformance({ store }, only: [check]) }
    }
}
