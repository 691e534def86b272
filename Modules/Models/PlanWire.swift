/// The local plan as its JSON carries it (`GET /v1/users/{id}/plan`, `LocalPlan` in the API's
/// document), as EngagementKit reads it into `ServerPlan` (`ServerPlan.decode` says which values
/// it refuses). The server writes the same JSON from the types generated from the document
/// (`Routes.getPlan`); the phone's end-to-end tests read the server's answers with this type, so
/// the two are held together by test, not by sharing one type.
public struct PlanWire: Codable, Hashable, Sendable {
    public var version: Int
    public var timeZone: String
    /// ISO 8601 UTC; null before the server's first planning pass.
    public var horizonEnd: String?
    /// In full: every request. In a delta: only those added or replaced since `since`.
    public var requests: [Request]
    /// Absent from a whole plan; in a delta, the version it changes (the pull's `since`).
    public var since: Int?
    /// Absent from a whole plan; in a delta, the identifiers the plan no longer holds.
    public var removed: [String]?
    /// The whole plan's digest (`PlanDigest`), whole or a delta; absent from a server before it.
    public var digest: String?

    public init(
        version: Int, timeZone: String, horizonEnd: String?, requests: [Request], since: Int? = nil,
        removed: [String]? = nil, digest: String? = nil
    ) {
        self.version = version
        self.timeZone = timeZone
        self.horizonEnd = horizonEnd
        self.requests = requests
        self.since = since
        self.removed = removed
        self.digest = digest
    }

    /// A notification trigger: `date` (fires once at `fireAt`), `calendar` (fires when the
    /// device's wall clock matches the fields given, in the device's zone; `repeats`: every time
    /// it matches) or `timeInterval` (`seconds` after it was added). Absent fields are omitted.
    public struct Trigger: Codable, Hashable, Sendable {
        public var type: String
        public var fireAt: String?
        public var repeats: Bool?
        public var year: Int?
        public var month: Int?
        public var day: Int?
        /// 1 (Sunday) to 7 (Saturday), as the platform numbers weekdays.
        public var weekday: Int?
        public var hour: Int?
        public var minute: Int?
        public var seconds: Int64?

        /// The wire form of `trigger`.
        public init(_ trigger: NotificationTrigger) {
            switch trigger {
            case .date(let instant):
                type = "date"
                fireAt = instant.iso8601
            case .calendar(let match, let repeats):
                type = "calendar"
                self.repeats = repeats
                (year, month, day, weekday) = (match.year, match.month, match.day, match.weekday?.rawValue)
                (hour, minute) = (match.hour, match.minute)
            case .timeInterval(let seconds, let repeats):
                type = "timeInterval"
                self.repeats = repeats
                self.seconds = seconds
            }
        }
    }

    /// One thing the user may do that withdraws a request (`Withdrawal`), as the JSON carries
    /// it: `activity` by name, `meal` for `mealLogged`, `from` and `until` (null: no end) ISO
    /// 8601 UTC. Read apart from the request, so one this build cannot read is reported and
    /// the request still applies (`ServerPlan.decode`).
    public struct Withdrawal: Codable, Hashable, Sendable {
        public var activity: String
        public var meal: String?
        public var from: String
        public var until: String?

        public init(activity: String, meal: String?, from: String, until: String?) {
            self.activity = activity
            self.meal = meal
            self.from = from
            self.until = until
        }

        /// The wire form of `withdrawal`.
        public init(_ withdrawal: Models.Withdrawal) {
            self.init(
                activity: withdrawal.activity.name, meal: withdrawal.activity.meal?.rawValue,
                from: withdrawal.from.iso8601, until: withdrawal.until?.iso8601)
        }

        private enum CodingKeys: String, CodingKey { case activity, meal, from, until }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(activity, forKey: .activity)
            try c.encodeIfPresent(meal, forKey: .meal)
            try c.encode(from, forKey: .from)
            try c.encode(until, forKey: .until)  // null, not absent
        }

        /// The withdrawal it names, or why this build cannot read it.
        public func withdrawal() -> Result<Models.Withdrawal, WithdrawalReadError> {
            guard let known = Models.Withdrawal.Activity(name: activity, meal: meal) else {
                return .failure(
                    WithdrawalReadError("activity \"\(activity)\"" + (meal.map { " meal \"\($0)\"" } ?? "")))
            }
            guard let start = Instant(iso8601: from) else { return .failure(WithdrawalReadError("from \"\(from)\"")) }
            var end: Instant?
            if let until {
                guard let instant = Instant(iso8601: until) else {
                    return .failure(WithdrawalReadError("until \"\(until)\""))
                }
                end = instant
            }
            return .success(Models.Withdrawal(known, from: start, until: end))
        }
    }

    /// One request, with everything the platform needs to show it.
    public struct Request: Codable, Hashable, Sendable {
        public var identifier: String
        public var kind: String
        public var title: String
        /// Null, not absent, when there is none (as `sound`).
        public var subtitle: String?
        public var body: String
        public var categoryIdentifier: String
        public var threadIdentifier: String
        public var interruptionLevel: String
        public var relevanceScore: Double
        /// The sound file (`reminder.caf`), or null for none.
        public var sound: String?
        /// What a push of it would carry beside `aps`: the deep link (`link`) and the kind.
        public var userInfo: [String: String]
        public var trigger: Trigger
        /// The next firing, ISO 8601 UTC.
        public var nextFireAt: String
        /// The same instant in the user's zone, with its offset (for people reading the plan; a
        /// reader does without it).
        public var localTime: String?
        /// What the user may do on the phone that withdraws it; nil from a server before the
        /// field (read as none).
        public var withdrawnBy: [Withdrawal]?

        public init(
            identifier: String, kind: String, title: String, subtitle: String?, body: String,
            categoryIdentifier: String, threadIdentifier: String, interruptionLevel: String, relevanceScore: Double,
            sound: String?, userInfo: [String: String], trigger: Trigger, nextFireAt: String, localTime: String?,
            withdrawnBy: [Withdrawal]? = nil
        ) {
            self.identifier = identifier
            self.kind = kind
            self.title = title
            self.subtitle = subtitle
            self.body = body
            self.categoryIdentifier = categoryIdentifier
            self.threadIdentifier = threadIdentifier
            self.interruptionLevel = interruptionLevel
            self.relevanceScore = relevanceScore
            self.sound = sound
            self.userInfo = userInfo
            self.trigger = trigger
            self.nextFireAt = nextFireAt
            self.localTime = localTime
            self.withdrawnBy = withdrawnBy
        }

        /// The wire form of `request`, firing next at `nextFireAt` (`localTime`: the same instant
        /// in the user's zone, nil to leave it out), withdrawn by `withdrawnBy`.
        public init(
            _ request: NotificationRequest, nextFireAt: Instant, localTime: String?,
            withdrawnBy: [Models.Withdrawal]
        ) {
            let content = request.content
            self.init(
                identifier: request.identifier.rawValue, kind: content.kind.rawValue, title: content.title,
                subtitle: content.subtitle, body: content.body, categoryIdentifier: content.category.rawValue,
                threadIdentifier: content.threadID, interruptionLevel: content.interruptionLevel.rawValue,
                relevanceScore: content.relevanceScore, sound: content.sound.map { "\($0.rawValue).caf" },
                userInfo: ["link": content.deepLink.description, "kind": content.kind.rawValue],
                trigger: Trigger(request.trigger), nextFireAt: nextFireAt.iso8601, localTime: localTime,
                withdrawnBy: withdrawnBy.map(Withdrawal.init))
        }

        private enum CodingKeys: String, CodingKey {
            case identifier, kind, title, subtitle, body, categoryIdentifier, threadIdentifier, interruptionLevel
            case relevanceScore, sound, userInfo, trigger, nextFireAt, localTime, withdrawnBy
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(identifier, forKey: .identifier)
            try c.encode(kind, forKey: .kind)
            try c.encode(title, forKey: .title)
            try c.encode(subtitle, forKey: .subtitle)  // null, not absent
            try c.encode(body, forKey: .body)
            try c.encode(categoryIdentifier, forKey: .categoryIdentifier)
            try c.encode(threadIdentifier, forKey: .threadIdentifier)
            try c.encode(interruptionLevel, forKey: .interruptionLevel)
            try c.encode(relevanceScore, forKey: .relevanceScore)
            try c.encode(sound, forKey: .sound)
            try c.encode(userInfo, forKey: .userInfo)
            try c.encode(trigger, forKey: .trigger)
            try c.encode(nextFireAt, forKey: .nextFireAt)
            try c.encode(localTime, forKey: .localTime)
            try c.encodeIfPresent(withdrawnBy, forKey: .withdrawnBy)
        }
    }

    private enum CodingKeys: String, CodingKey {
        case version, timeZone, horizonEnd, requests, since, removed, digest
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(version, forKey: .version)
        try c.encode(timeZone, forKey: .timeZone)
        try c.encode(horizonEnd, forKey: .horizonEnd)  // null before the first pass
        try c.encode(requests, forKey: .requests)
        try c.encodeIfPresent(since, forKey: .since)
        try c.encodeIfPresent(removed, forKey: .removed)
        try c.encodeIfPresent(digest, forKey: .digest)
    }
}
