import Crypto
import Delivery
import Foundation
import Models
import Synchronization
import Testing

@testable import APNs

/// A deployment's shared place for the token, in memory, with `ProviderTokenSharing`'s rule.
final class MemoryTokenSharing: ProviderTokenSharing {
    private let kept = Mutex<SharedProviderToken?>(nil)
    let reachable = Atomic<Bool>(true)

    struct Unreachable: Error {}

    func newest(keyID: String) throws -> SharedProviderToken? {
        guard reachable.load(ordering: .relaxed) else { throw Unreachable() }
        return kept.withLock { $0 }
    }

    func keep(_ token: SharedProviderToken, unlessIssuedAfter cutoff: Instant) throws -> SharedProviderToken {
        guard reachable.load(ordering: .relaxed) else { throw Unreachable() }
        return kept.withLock { kept in
            if let current = kept, current.issuedAt > cutoff { return current }
            kept = token
            return token
        }
    }
}

@Suite("Provider tokens shared by several processes")
struct SharedProviderTokenTests {
    let key = P256.Signing.PrivateKey()

    func tokens(_ sharing: any ProviderTokenSharing, _ clock: TestClock) throws -> ProviderTokens {
        ProviderTokens(
            credentials: try APNsCredentials(privateKey: key, keyID: keyID, teamID: teamID), shared: sharing,
            now: { clock.now() })
    }

    @Test("Two workers send with the first one's token; only it signed")
    func theFirstTokenIsEveryones() async throws {
        let sharing = MemoryTokenSharing()
        let clock = TestClock()
        let a = try tokens(sharing, clock)
        let b = try tokens(sharing, clock)
        let first = try await a.current()
        clock.advance(bySeconds: 60)
        let second = try await b.current()
        #expect(second.jwt == first.jwt)
        #expect(second.issuedAt == first.issuedAt)
        #expect(await a.signedCount == 1)
        #expect(await b.signedCount == 0)
    }

    @Test("At the refresh age one new token replaces the shared one; the other worker adopts it")
    func renewalIsShared() async throws {
        let sharing = MemoryTokenSharing()
        let clock = TestClock()
        let a = try tokens(sharing, clock)
        let b = try tokens(sharing, clock)
        let first = try await a.current()
        _ = try await b.current()
        clock.advance(bySeconds: ProviderTokens.defaultRefreshAfterSeconds)
        let renewed = try await a.current()
        #expect(renewed.jwt != first.jwt)
        #expect(try await b.current().jwt == renewed.jwt)
        #expect(await b.signedCount == 0)
    }

    @Test("A token APNs called expired is replaced for all, even when it is young")
    func anExpiredTokenIsReplacedForAll() async throws {
        let sharing = MemoryTokenSharing()
        let clock = TestClock()
        let a = try tokens(sharing, clock)
        let b = try tokens(sharing, clock)
        let first = try await a.current()
        _ = try await b.current()
        let replaced = try await b.renew(replacing: try await b.current())
        #expect(replaced.jwt != first.jwt)
        #expect(try sharing.newest(keyID: keyID)?.jwt == replaced.jwt)
    }

    @Test("When the shared place cannot be reached, a worker signs its own and keeps sending")
    func unreachableSharingFallsBack() async throws {
        let sharing = MemoryTokenSharing()
        sharing.reachable.store(false, ordering: .relaxed)
        let tokens = try tokens(sharing, TestClock())
        let token = try await tokens.current()
        #expect(!token.jwt.isEmpty)
        #expect(await tokens.signedCount == 1)
    }
}
