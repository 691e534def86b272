import Models
import Storage
import StoreConformance
import Testing

@Suite("RuntimeStore conformance")
struct RuntimeStoreConformanceTests {
    @Test("The in-memory store keeps the runtime's contract", arguments: RuntimeStoreCheck.allCases)
    func inMemory(_ check: RuntimeStoreCheck) throws {
        try checkRuntimeStoreConformance({ InMemoryEngagementStore() }, only: [check])
    }
}
