import Content
import Engagement
import Foundation
import Models
import PostgresStore
import Runtime
import Storage

/// The scale test's world: users with a profile, an engine, one device, and one to three due
/// alerts each, some overdue when the workers start (a backlog, as after an outage) and some
/// due during the run. Deterministic from the seed.
struct ScaleLoad {
    struct Notification {
        var userID: UserID
        var dueAt: Instant
    }

    /// The instant engine time starts at when the workers start.
    let start: Instant
    /// Every alert loaded, by its key (`apns-id`).
    var notifications: [String: Notification] = [:]
    var profiles: [UserID: UserProfile] = [:]
    /// The user of each device token.
    var userOfToken: [String: UserID] = [:]

    /// Zones chosen so that noon UTC finds users in every part of the day: night (Adelaide,
    /// Chatham, Los Angeles, Kiritimati, Pago Pago), evening close to quiet hours (Tokyo), and
    /// half- and quarter-hour offsets (Kolkata, Kathmandu, St John's, Chatham).
    static let zones = [
        "Europe/Berlin", "America/New_York", "America/Los_Angeles", "Asia/Tokyo", "Asia/Kolkata", "Asia/Kathmandu",
        "Australia/Adelaide", "Pacific/Chatham", "America/St_Johns", "Pacific/Kiritimati", "Pacific/Pago_Pago",
        "Europe/London",
    ]

    /// Builds `users` users and imports them into `store`, 2,000 per transaction.
    static func load(
        users: Int, backlogHours: Int, futureHours: Int, seed: UInt64, start: Instant, into store: PostgresRuntimeStore,
        log: (String) -> Void
    ) throws -> ScaleLoad {
        var world = ScaleLoad(start: start)
        var random = SeededGenerator(seed: seed)
        let content = ContentGenerator(catalog: try TemplateCatalog.bundled())
        let zoneRules = Dictionary(uniqueKeysWithValues: zones.map { ($0, ZoneRules(identifier: $0)!) })
        let quietChoices = [
            try QuietHours(start: .init(minutesSinceMidnight: 22 * 60), end: .init(minutesSinceMidnight: 7 * 60)),
            try QuietHours(start: .init(minutesSinceMidnight: 23 * 60), end: .init(minutesSinceMidnight: 6 * 60 + 30)),
        ]
        var batch: [ImportedUser] = []
        let loadStarted = Date()
        for index in 0..<users {
            let userID: UserID = "user-\(index)"
            let zone = zones[Int(random.next() % UInt64(zones.count))]
            var preferences = NotificationPreferences()
            let draw = random.next() % 10
            preferences.quietHours = draw < 6 ? quietChoices[0] : draw < 8 ? quietChoices[1] : nil
            let profile = UserProfile(
                id: userID, displayName: "User \(index)", timeZone: zone, preferences: preferences)
            world.profiles[userID] = profile
            // A fresh engine's snapshot: the user exists for the runtime as after sign-up; the alerts
            // below are the scale test's own, not the engine's plan.
            let engine = UserEngine(
                profile: profile, zone: zoneRules[zone]!, now: start - Int64(backlogHours) * 3_600,
                configuration: EngineConfiguration(), contentSeed: UInt64(index), content: content)
            var rows: [OutboxRow] = []
            for number in 0..<Int(1 + random.next() % 3) {
                let overdue = random.next() % 10 < 6
                let offset = Int64(random.next() % UInt64(max(1, (overdue ? backlogHours : futureHours) * 3_600)))
                let dueAt = overdue ? start - offset : start + offset
                let requestID: RequestID = "scale-\(index)-\(number)"
                let request = NotificationRequest(
                    identifier: requestID,
                    // An announcement: stale only a day after it was due (`ClaimTimePolicy`), so
                    // the backlog and the late claims of the faults are sent, not expired.
                    content: NotificationContent(
                        kind: .featureAnnouncement, title: "Update \(number + 1)",
                        body: "Something new for you, \(profile.firstName)"),
                    trigger: .date(dueAt))
                let key = OutboxKey.make(userID, requestID, dueAt, .push)
                rows.append(
                    OutboxRow(
                        key: key, userID: userID, requestID: requestID, dueAt: dueAt,
                        payload: .alert(request)))
                world.notifications[key.rawValue] = Notification(userID: userID, dueAt: dueAt)
            }
            let token = String(format: "%064x", index)
            world.userOfToken[token] = userID
            let device = DeviceRegistration(
                token: token, userID: userID, environment: .production, platform: "ios", registeredAt: start)
            batch.append(ImportedUser(profile: profile, snapshot: engine.snapshot(), outbox: rows, devices: [device]))
            if batch.count == 2_000 || index == users - 1 {
                try store.importUsers(batch)
                batch = []
            }
            if (index + 1) % max(1, users / 10) == 0 {
                log("loaded \(index + 1) users (\(Int(Date().timeIntervalSince(loadStarted))) s)")
            }
        }
        return world
    }
}
