import Foundation
import StoreConformance
import Testing

@testable import Storage

@Suite("Social ids and ledger retention conformance")
struct SocialRetentionConformanceTests {
    @Test(
        "The in-memory store keeps the social ids' and the ledger retention's contract",
        arguments: SocialRetentionCheck.allCases)
    func inMemory(_ check: SocialRetentionCheck) throws {
        try checkSocialRetentionConformance({ InMemoryEngagementStore() }, only: [check])
    }

    @Test(
        "The SQLite store keeps the social ids' and the ledger retention's contract",
        arguments: SocialRetentionCheck.allCases)
    func sqlite(_ check: SocialRetentionCheck) throws {
        try withTemporaryDirectory { directory in
            try checkSocialRetentionConformance(
                { try SQLiteEngagementStore(path: directory.appendingPathComponent("\(check).sqlite").path) },
                only: [check])
        }
    }
}
