import FakeAPNs
import Foundation
import Models

/// Judges a scale run from the fake APNs's record: every loaded alert delivered exactly once
/// (itself, or inside the one alert it was merged into at claim time), each user's alerts in
/// due order, none in the user's quiet hours, none before it was due.
struct ScaleJudge {
    struct Verdict {
        var notifications = 0
        /// Loaded alerts delivered (alone or merged).
        var delivered = 0
        var missing = 0
        /// Alerts a user would see twice: delivered alone and inside a merge, or under two ids.
        var duplicates = 0
        /// Pushes APNs accepted (status 200), counting re-sends.
        var pushes = 0
        /// Pushes that carried several alerts (claim-time merges).
        var mergedPushes = 0
        /// The same `apns-id` accepted again: a re-send after a crash or a lost answer, which
        /// the idempotency key makes recognisable downstream.
        var resentWithSameApnsID = 0
        var orderViolations = 0
        var quietHoursViolations = 0
        var earlyViolations = 0
        /// Pushes neither loaded nor a merge of loaded alerts.
        var unknownPushes = 0
        var examples: [String] = []
        var sendsPerSecond = 0.0
        var averageSendsPerSecond = 0.0

        var passed: Bool {
            missing == 0 && duplicates == 0 && orderViolations == 0 && quietHoursViolations == 0
                && earlyViolations == 0 && unknownPushes == 0
        }
    }

    let load: ScaleLoad
    /// Replaced key -> the key of the merged row that replaced it (`outbox_merged`).
    let mergedInto: [String: String]
    /// Engine time at a wall instant, as the workers' scaled clock computes it.
    let engineTime: (Int64) -> Instant

    func judge(_ pushes: [FakeAPNs.Push]) -> Verdict {
        var verdict = Verdict()
        verdict.notifications = load.notifications.count
        let accepted = pushes.filter { $0.status == 200 }
        verdict.pushes = accepted.count
        // First arrival of each apns-id, and how often each was accepted.
        var firstArrival: [String: FakeAPNs.Push] = [:]
        var acceptedCount: [String: Int] = [:]
        for push in accepted {
            guard let id = push.apnsID?.lowercased() else { continue }
            acceptedCount[id, default: 0] += 1
            if firstArrival[id] == nil { firstArrival[id] = push }
        }
        verdict.resentWithSameApnsID = acceptedCount.values.reduce(0) { $0 + max(0, $1 - 1) }

        // Which loaded alerts each delivered id carries.
        var carried: [String: [String]] = [:]
        for key in load.notifications.keys.sorted() {
            let final = resolve(key)
            if firstArrival[final] != nil {
                verdict.delivered += 1
                carried[final, default: []].append(key)
                if final != key, firstArrival[key] != nil {
                    verdict.duplicates += 1
                    note(&verdict, "\(key) delivered alone and merged into \(final)")
                }
            } else {
                verdict.missing += 1
                note(&verdict, "\(key) of \(load.notifications[key]!.userID) never delivered (final \(final))")
            }
        }
        verdict.mergedPushes = carried.values.filter { $0.count > 1 }.count
        for id in firstArrival.keys where carried[id] == nil && load.notifications[id] == nil {
            verdict.unknownPushes += 1
            note(&verdict, "push \(id) carries no loaded alert")
        }

        // Per user: order, quiet hours, not early.
        var byUser: [UserID: [(arrival: Int64, keys: [String])]] = [:]
        for (id, keys) in carried {
            guard let push = firstArrival[id], let user = load.notifications[keys[0]]?.userID else { continue }
            byUser[user, default: []].append((push.receivedAtMilliseconds, keys))
        }
        for push in accepted {
            guard let user = load.userOfToken[push.deviceToken], let profile = load.profiles[user],
                let zone = ZoneRules(identifier: profile.timeZone), let quiet = profile.preferences.quietHours
            else { continue }
            let local = zone.localDateTime(at: engineTime(push.receivedAtMilliseconds))
            if quiet.contains(local) {
                verdict.quietHoursViolations += 1
                note(
                    &verdict,
                    "\(user) got \(push.apnsID ?? "?") at \(local) local, inside \(profile.timeZone) quiet hours")
            }
        }
        for (user, sends) in byUser {
            let ordered = sends.sorted { $0.arrival < $1.arrival }
            var latestDueSoFar = Instant(secondsSinceEpoch: .min)
            for send in ordered {
                let dues = send.keys.compactMap { load.notifications[$0]?.dueAt }
                guard let earliest = dues.min(), let latest = dues.max() else { continue }
                if earliest < latestDueSoFar {
                    verdict.orderViolations += 1
                    note(
                        &verdict,
                        "\(user): an alert due \(earliest.iso8601) arrived after one due \(latestDueSoFar.iso8601)")
                }
                latestDueSoFar = max(latestDueSoFar, latest)
                if engineTime(send.arrival) < earliest {
                    verdict.earlyViolations += 1
                    note(&verdict, "\(user): an alert due \(earliest.iso8601) arrived early")
                }
            }
        }
        (verdict.sendsPerSecond, verdict.averageSendsPerSecond) = Self.rates(accepted.map(\.receivedAtMilliseconds))
        return verdict
    }

    /// The key a loaded key was finally delivered under: merges can be merged again.
    func resolve(_ key: String) -> String {
        var current = key
        var hops = 0
        while let next = mergedInto[current], hops < 64 {
            current = next
            hops += 1
        }
        return current
    }

    /// The busiest five seconds' rate, and the rate over the whole span of arrivals.
    static func rates(_ arrivals: [Int64]) -> (busiest: Double, average: Double) {
        let sorted = arrivals.sorted()
        guard let first = sorted.first, let last = sorted.last, sorted.count > 1 else { return (0, 0) }
        var busiest = 0
        var low = 0
        for high in sorted.indices {
            while sorted[high] - sorted[low] >= 5_000 { low += 1 }
            busiest = max(busiest, high - low + 1)
        }
        let span = max(Double(last - first) / 1_000, 0.001)
        return (Double(busiest) / min(5, span), Double(sorted.count) / span)
    }

    private func note(_ verdict: inout Verdict, _ example: String) {
        if verdict.examples.count < 20 { verdict.examples.append(example) }
    }
}
