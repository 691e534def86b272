import Crypto
import Hummingbird
import Models

// Idempotency keys are durable: the first answer to a keyed event is an `IdempotencyRecord`
// committed in the same transaction as the event (`EngineRuntime.apply(_:to:idempotencyKey:...)`),
// so a retry after a restart or a crash gets that answer again and the event is applied once.
// This process only remembers which keys have a request running right now.

/// The keys (per user) whose first request is still being processed: a second request with
/// the same key meanwhile is refused with 409 instead of waiting or running twice.
///
/// Bounded by the requests in flight: a key is held from `begin` until `finish`, which the route
/// calls on every path out of the request.
actor RunningKeys {
    private struct Slot: Hashable {
        var userID: UserID
        var key: String
    }

    private var running: Set<Slot> = []

    var count: Int { running.count }

    /// Marks the key running; false when it already is.
    func begin(userID: UserID, key: String) -> Bool {
        running.insert(Slot(userID: userID, key: key)).inserted
    }

    func finish(userID: UserID, key: String) {
        running.remove(Slot(userID: userID, key: key))
    }
}

enum RequestHash {
    /// The SHA-256 of a request body in lowercase hex: bodies are compared byte for byte.
    static func of(_ body: [UInt8]) -> String {
        SHA256.hash(data: body).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}
