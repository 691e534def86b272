public import Engagement
import Foundation
import LiveActivity
public import Models
public import Scheduling
public import Storage

/// Which outbox rows an engine step's effects make: a pure mapping, so a replayed step makes
/// the same rows with the same keys.
///
/// - `schedule(request, fireAt, channel)`: an `inbox` row due at `fireAt`, and for a remote
///   notification (the channel the planning pass chose) a `push` row beside it; each replaces
///   the pending row of the same request and channel; the payload is the request (`alert`), and
///   for the inbox row the channel that shows it (`inboxItem`). A local kind
///   gets no `push` row: the device fires it from its own pending list (the app mirrors the
///   plan the server's `GET /v1/users/{id}/plan` gives), so one occurrence never arrives
///   twice.
/// - `cancel(ids)`: the pending rows of those requests are withdrawn.
/// - `submitBackgroundTask(job)`: a `job` row due at its earliest begin; performing it applies
///   `backgroundTaskLaunched(job)` to the engine (the server's stand-in for BGTaskScheduler).
/// - `liveActivity(command)`: a `liveActivity` row due at once (`LiveActivityPush`).
/// - Effects that act on the device only (badge, clearing delivered notifications, deep links)
///   and copy requests make no row.
public enum OutboxPlan {
    /// The outbox channels the server performs a notification scheduled on `channel` on.
    public static func notificationChannels(for channel: DeliveryChannel) -> [OutboxChannel] {
        channel == .remote ? [.push, .inbox] : [.inbox]
    }

    /// The rows of `effects` of a step at `now` (a job without an earliest begin is due at `now`).
    public static func rows(for effects: [Effect], userID: UserID, at now: Instant) -> (
        cancelled: [RequestID], rows: [OutboxRow]
    ) {
        var cancelled: [RequestID] = []
        var rows: [OutboxRow] = []
        /// A later row replaces an earlier one of the same request and channel (a step that
        /// schedules a request twice keeps the last).
        func add(_ row: OutboxRow) {
            rows.removeAll { $0.requestID == row.requestID && $0.channel == row.channel }
            rows.append(row)
        }
        for effect in effects {
            switch effect {
            case .schedule(let request, let fireAt, let delivery):
                for channel in notificationChannels(for: delivery) {
                    let payload: OutboxPayload =
                        channel == .push ? .alert(request) : .inboxItem(request, shownBy: delivery)
                    add(
                        OutboxRow(
                            key: OutboxKey.make(userID, request.identifier, fireAt, channel), userID: userID,
                            requestID: request.identifier, dueAt: fireAt, payload: payload))
                }
            case .cancel(let ids):
                cancelled += ids
                let withdrawn = Set(ids)
                rows.removeAll { $0.channel != .job && withdrawn.contains($0.requestID) }
            case .submitBackgroundTask(let task):
                // The engine submits its own jobs only; a task that names none has no row.
                guard let backgroundJob = task.job else { break }
                let job = RequestID(task.identifier)
                let dueAt = task.earliestBegin ?? now
                add(
                    OutboxRow(
                        key: OutboxKey.make(userID, job, dueAt, .job), userID: userID, requestID: job, dueAt: dueAt,
                        payload: .job(backgroundJob)))
            case .liveActivity(let command):
                let channel = OutboxChannel.liveActivity
                let requestID = RequestID(command.requestID)
                add(
                    OutboxRow(
                        key: OutboxKey.make(userID, requestID, command.at, channel), userID: userID,
                        requestID: requestID, dueAt: command.at,
                        payload: .liveActivity(command)))
            case .setBadge, .clearDeliveredNotifications, .openDeepLink, .generateContent, .trace:
                break
            }
        }
        return (cancelled, rows)
    }
}

extension OutboxPayload {
    /// The calendar match of a repeating notification (a daily series), whose row is due again
    /// at its next match once performed; nil for anything else.
    public var repeatingMatch: CalendarMatch? {
        guard case .calendar(let match, repeats: true) = notification?.trigger else { return nil }
        return match
    }
}

/// Outbox keys: deterministic, and shaped as a UUID (RFC 9562 version 8), because a push's key
/// is its `apns-id`, which APNs requires in that form.
extension OutboxKey {
    public static func make(_ userID: UserID, _ requestID: RequestID, _ dueAt: Instant, _ channel: OutboxChannel)
        -> OutboxKey
    {
        // Both FNV-1a hashes of "user␟request␟dueAt␟channel", fed piece by piece: the same
        // hashes as over the joined text, without building it (a key is made per push). The
        // states are a value passed in and out, not variables a nested function captures (each
        // captured access is an exclusivity check).
        var hashes = TwoHashes()
        hashes.feed(userID.rawValue)
        hashes.feedSeparator()
        hashes.feed(requestID.rawValue)
        hashes.feedSeparator()
        DecimalText.withBytes(of: dueAt.secondsSinceEpoch) { hashes.feed($0) }
        hashes.feedSeparator()
        hashes.feed(channel.name)
        let high = (hashes.high & ~0xF000) | 0x8000  // version 8
        let low = (hashes.low & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000  // variant 10
        // 8-4-4-4-12 lowercase hex digits.
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 36) { text in
            var position = 0
            for index in 0..<32 {
                if index == 8 || index == 12 || index == 16 || index == 20 {
                    text[position] = UInt8(ascii: "-")
                    position += 1
                }
                let word = index < 16 ? high : low
                let nibble = word >> (UInt64(15 - index % 16) * 4) & 0xF
                text[position] = nibble < 10 ? 48 + UInt8(nibble) : 87 + UInt8(nibble)
                position += 1
            }
            return OutboxKey(String(decoding: UnsafeBufferPointer(rebasing: text[..<36]), as: UTF8.self))
        }
    }
}

/// The two FNV-1a states behind an outbox key (`FNV1a`, from two bases), fed the same bytes.
private struct TwoHashes {
    var high = FNV1a.offsetBasis
    var low: UInt64 = 0x6C62_272E_07BB_0142

    mutating func feed(_ bytes: UnsafeBufferPointer<UInt8>) {
        high = FNV1a.hash(bytes: bytes, basis: high)
        low = FNV1a.hash(bytes: bytes, basis: low)
    }

    /// A string's bytes, read in place.
    mutating func feed(_ text: String) { text.withUTF8Bytes { feed($0) } }

    /// The unit separator between the pieces.
    mutating func feedSeparator() {
        high = FNV1a.hash(bytes: CollectionOfOne(0x1F), basis: high)
        low = FNV1a.hash(bytes: CollectionOfOne(0x1F), basis: low)
    }
}
