// The kit over Apple's UserNotifications. This file is compiled on Apple platforms only; on
// Linux its syntax is checked (`swiftc -parse` in CI), and everything it decides is the
// platform-neutral code it calls (`PlanSync`, `RecordingCenter`), tested here.
#if canImport(UserNotifications)
    public import Delivery
    public import Foundation
    public import Models
    public import UserNotifications

    extension PlanSync {
        /// Applies a pull's answer to the app's `UNUserNotificationCenter`: reads what the center
        /// holds, plans against a `RecordingCenter` over it, then performs the recorded changes in
        /// order. `zone` is the device's zone now; `pull` is the one this answers
        /// (`startPull`). A change the real center refuses leaves the plan's version untaken, so
        /// the next pull tries again.
        public mutating func apply(
            _ answer: PlanAnswer, to center: UNUserNotificationCenter, zone: ZoneRules, at now: Instant,
            answering pull: PlanPull? = nil
        ) async -> PlanSyncOutcome {
            guard case .plan = answer else { return .unchanged }
            let settings = await center.notificationSettings()
            let pending = await center.pendingNotificationRequests()
            // What is still shown: a one-off shown already is not placed again (`PlanReconciliation`).
            let delivered = await center.deliveredNotifications().map { shown in
                DeliveredNotification(
                    request: AppleNotifications.request(from: shown.request),
                    deliveredAt: Instant(secondsSinceEpoch: Int64(shown.date.timeIntervalSince1970)),
                    presentation: .banner)
            }
            let registered = await center.notificationCategories()
            // The kit's categories are registered again when any is missing or differs (its actions,
            // its dismissal option); the app's own categories are kept beside them.
            let kitIDs = Set(NotificationCategory.all.map(\.id.rawValue))
            let others = registered.filter { !kitIDs.contains($0.identifier) }
            let upToDate = AppleNotifications.holdsKitCategories(registered)
            var recording = RecordingCenter(
                zone: zone, authorizationStatus: AppleNotifications.status(settings.authorizationStatus),
                pending: pending.map(AppleNotifications.request(from:)),
                categories: upToDate ? NotificationCategory.all : [], delivered: delivered, at: now)
            let outcome = apply(answer, to: &recording, at: now, answering: pull)
            var failed = false
            for operation in recording.operations {
                switch operation {
                case .setCategories(let categories):
                    center.setNotificationCategories(Set(categories.map(AppleNotifications.category)).union(others))
                case .add(let request):
                    do { try await center.add(AppleNotifications.request(request, at: now)) } catch { failed = true }
                case .removePending(let identifiers):
                    center.removePendingNotificationRequests(withIdentifiers: identifiers.map(\.rawValue))
                case .removeAllPending: center.removeAllPendingNotificationRequests()
                case .removeDelivered(let identifiers):
                    center.removeDeliveredNotifications(withIdentifiers: identifiers.map(\.rawValue))
                case .removeAllDelivered: center.removeAllDeliveredNotifications()
                case .setBadge(let count):
                    do { try await center.setBadgeCount(count) } catch { failed = true }
                }
            }
            if failed { forgetVersion() }
            return outcome
        }
    }

    extension PlanSync {
        /// Withdraws from the app's `UNUserNotificationCenter`, at once, what the user's event
        /// makes moot (`withdraw(after:)`); returns the identifiers withdrawn.
        @discardableResult
        public mutating func withdraw(
            after event: WithdrawingEvent, from center: UNUserNotificationCenter
        ) -> [RequestID] {
            let moot = withdraw(after: event)
            if !moot.isEmpty { center.removePendingNotificationRequests(withIdentifiers: moot.map(\.rawValue)) }
            return moot
        }
    }

    /// Conversions between the kit's values and UserNotifications'.
    enum AppleNotifications {
        /// The user info key under which the kit keeps the request it placed, as JSON, so it
        /// reads back exactly what it placed.
        static let requestKey = "engagementKit.request"

        static func status(_ status: UNAuthorizationStatus) -> AuthorizationStatus {
            switch status {
            case .notDetermined: .notDetermined
            case .denied: .denied
            case .authorized: .authorized
            case .provisional: .provisional
            #if os(iOS)
                case .ephemeral: .ephemeral
            #endif
            @unknown default: .denied
            }
        }

        /// A pending request as the kit sees it: the one it placed, read back from its user info;
        /// any other (the app's own) by its identifier and next firing only, which is all the kit
        /// needs of requests it never touches.
        static func request(from pending: UNNotificationRequest) -> NotificationRequest {
            if let json = pending.content.userInfo[requestKey] as? String,
                let placed = try? JSONDecoder().decode(NotificationRequest.self, from: Data(json.utf8))
            {
                return placed
            }
            var next: Date?
            if let calendar = pending.trigger as? UNCalendarNotificationTrigger { next = calendar.nextTriggerDate() }
            if let interval = pending.trigger as? UNTimeIntervalNotificationTrigger {
                next = interval.nextTriggerDate()
            }
            let at = Instant(secondsSinceEpoch: Int64((next ?? .distantFuture).timeIntervalSince1970))
            return NotificationRequest(
                identifier: RequestID(pending.identifier),
                content: NotificationContent(kind: .morningGreeting, title: pending.content.title, body: ""),
                trigger: .date(at))
        }

        static func request(_ request: NotificationRequest, at now: Instant) -> UNNotificationRequest {
            let content = UNMutableNotificationContent()
            let shown = request.content
            content.title = shown.title
            content.subtitle = shown.subtitle ?? ""
            content.body = shown.body
            content.categoryIdentifier = shown.category.rawValue
            content.threadIdentifier = shown.threadID
            content.relevanceScore = shown.relevanceScore
            content.interruptionLevel = level(shown.interruptionLevel)
            content.sound = shown.sound.map {
                UNNotificationSound(named: UNNotificationSoundName("\($0.rawValue).caf"))
            }
            var userInfo: [String: String] = ["link": shown.deepLink.description, "kind": shown.kind.rawValue]
            if let json = try? JSONEncoder().encode(request) {
                userInfo[requestKey] = String(decoding: json, as: UTF8.self)
            }
            content.userInfo = userInfo
            return UNNotificationRequest(
                identifier: request.identifier.rawValue, content: content, trigger: trigger(request.trigger))
        }

        static func trigger(_ trigger: NotificationTrigger) -> UNNotificationTrigger {
            switch trigger {
            case .date(let instant):
                var calendar = Calendar(identifier: .gregorian)
                calendar.timeZone = TimeZone(secondsFromGMT: 0) ?? calendar.timeZone
                let date = Date(timeIntervalSince1970: TimeInterval(instant.secondsSinceEpoch))
                var components = calendar.dateComponents(
                    [.year, .month, .day, .hour, .minute, .second], from: date)
                components.timeZone = calendar.timeZone
                return UNCalendarNotificationTrigger(dateMatching: components, repeats: false)
            case .calendar(let match, let repeats):
                var components = DateComponents()
                components.year = match.year
                components.month = match.month
                components.day = match.day
                components.weekday = match.weekday?.rawValue
                components.hour = match.hour
                components.minute = match.minute
                return UNCalendarNotificationTrigger(dateMatching: components, repeats: repeats)
            case .timeInterval(let seconds, let repeats):
                return UNTimeIntervalNotificationTrigger(timeInterval: TimeInterval(seconds), repeats: repeats)
            }
        }

        static func level(_ level: InterruptionLevel) -> UNNotificationInterruptionLevel {
            switch level {
            case .passive: .passive
            case .active: .active
            case .timeSensitive: .timeSensitive
            case .critical: .critical
            }
        }

        /// Whether `registered` holds each of the kit's categories with its actions and options.
        static func holdsKitCategories(_ registered: Set<UNNotificationCategory>) -> Bool {
            let byID = Dictionary(registered.map { ($0.identifier, $0) }, uniquingKeysWith: { first, _ in first })
            return NotificationCategory.all.allSatisfy { category in
                guard let held = byID[category.id.rawValue] else { return false }
                return held.actions.map(\.identifier) == category.actions.map(\.id.rawValue)
                    && held.options.contains(.customDismissAction) == category.reportsDismissal
            }
        }

        static func category(_ category: NotificationCategory) -> UNNotificationCategory {
            let actions = category.actions.map { action in
                var options: UNNotificationActionOptions = []
                if action.options.contains(.foreground) { options.insert(.foreground) }
                if action.options.contains(.destructive) { options.insert(.destructive) }
                if action.options.contains(.authenticationRequired) { options.insert(.authenticationRequired) }
                return UNNotificationAction(identifier: action.id.rawValue, title: action.title, options: options)
            }
            return UNNotificationCategory(
                identifier: category.id.rawValue, actions: actions, intentIdentifiers: [],
                options: category.reportsDismissal ? [.customDismissAction] : [])
        }
    }
#endif
