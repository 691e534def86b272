import Crypto

// Idempotency keys are durable: the first answer to a keyed event is an `IdempotencyRecord`
// committed in the same transaction as the event (`EngineRuntime.apply(_:to:idempotencyKey:...)`),
// so a retry after a restart or a crash gets that answer again and the event is applied once.
// The runtime also holds the only lock of a key while its request is applied; a second request
// meanwhile is refused with 409 (`WhileKeyRuns.refuse`).

enum RequestHash {
    /// The SHA-256 of a request body in lowercase hex: bodies are compared byte for byte.
    static func of(_ body: [UInt8]) -> String {
        SHA256.hash(data: body).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}
