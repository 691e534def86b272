public import Foundation
public import Models

/// The plan `GET /v1/users/{id}/plan` answers: the local notifications the server planned for
/// the user, each with everything the device shows. Read with `ServerPlan.decode(_:)`.
///
/// A request this build cannot read (a kind, category, level, sound, link or trigger a newer
/// server added) is not guessed at: it is left out of `requests` and named in `unreadable`, and
/// the rest of the plan still applies.
public struct ServerPlan: Hashable, Sendable {
    /// The plan's revision: it grows whenever a request is added, replaced or removed, and is
    /// never given to two plans; it goes back only when the server resumed from an older state
    /// (`PlanSync.apply` tells that from a slow answer).
    public var version: Int
    /// The user's IANA zone, in which the calendar triggers match.
    public var timeZone: String
    /// Where the server's planning stopped; nil before its first pass.
    public var horizonEnd: Instant?
    /// The requests this build can read, soonest first, each with its next firing. In a delta,
    /// only those added or replaced.
    public var requests: [Entry]
    /// Nil for a whole plan. In a delta (`GET /v1/users/{id}/plan?since=7`), the version it
    /// changes: the device keeps each request of that version the delta neither lists nor
    /// removes (`PlanSync.apply`).
    public var since: Int?
    /// In a delta, the identifiers the plan no longer holds; empty in a whole plan.
    public var removed: [RequestID]
    /// The digest of the whole plan's requests (`PlanDigest`), whole or a delta: what a merged
    /// delta must come to. Nil from a server before it.
    public var digest: String?
    /// The identifiers of the requests it cannot read, with why.
    public var unreadable: [UnreadableRequest]
    /// The withdrawals it cannot read (an activity a newer server names), by request: each
    /// withdraws nothing, and its request still applies.
    public var unreadableWithdrawals: [UnreadableRequest]

    public struct Entry: Hashable, Sendable {
        public var request: NotificationRequest
        /// The next firing as the server computed it (ISO 8601 in the answer).
        public var nextFireAt: Instant
        /// What the user may do on the phone that withdraws it at once (`PlanSync.withdraw`).
        public var withdrawnBy: [Withdrawal]

        public init(request: NotificationRequest, nextFireAt: Instant, withdrawnBy: [Withdrawal] = []) {
            self.request = request
            self.nextFireAt = nextFireAt
            self.withdrawnBy = withdrawnBy
        }
    }

    public init(
        version: Int, timeZone: String, horizonEnd: Instant?, requests: [Entry], since: Int? = nil,
        removed: [RequestID] = [], digest: String? = nil, unreadable: [UnreadableRequest] = [],
        unreadableWithdrawals: [UnreadableRequest] = []
    ) {
        self.version = version
        self.timeZone = timeZone
        self.horizonEnd = horizonEnd
        self.requests = requests
        self.since = since
        self.removed = removed
        self.digest = digest
        self.unreadable = unreadable
        self.unreadableWithdrawals = unreadableWithdrawals
    }

    /// Reads the answer's JSON body. A body that is not a plan at all (not JSON, no `version`,
    /// a negative version, a delta whose `since` is negative or names no `removed` list, an
    /// empty identifier removed, a digest not of 16 lowercase hexadecimal digits) throws
    /// `PlanReadError`, naming the field.
    public static func decode(_ body: Data) throws(PlanReadError) -> ServerPlan {
        let wire: PlanWire
        do { wire = try JSONDecoder().decode(PlanWire.self, from: body) } catch {
            throw PlanReadError(field: Self.field(of: error), reason: "\(error)")
        }
        guard wire.version >= 0 else { throw PlanReadError(field: "version", reason: "negative: \(wire.version)") }
        if let since = wire.since, since < 0 { throw PlanReadError(field: "since", reason: "negative: \(since)") }
        if wire.since != nil, wire.removed == nil {
            throw PlanReadError(field: "removed", reason: "missing from a delta (an answer with since)")
        }
        if let index = wire.removed?.firstIndex(where: \.isEmpty) {
            throw PlanReadError(field: "removed.\(index)", reason: "an empty identifier")
        }
        if let digest = wire.digest, digest.utf8.count != 16 || !digest.utf8.allSatisfy(Self.isLowercaseHex) {
            throw PlanReadError(
                field: "digest", reason: "not 16 lowercase hexadecimal digits: \"\(digest.prefix(40))\"")
        }
        var horizonEnd: Instant?
        if let text = wire.horizonEnd {
            guard let instant = Instant(iso8601: text) else {
                throw PlanReadError(field: "horizonEnd", reason: "not an ISO 8601 instant: \"\(text)\"")
            }
            horizonEnd = instant
        }
        var plan = ServerPlan(
            version: wire.version, timeZone: wire.timeZone, horizonEnd: horizonEnd, requests: [], since: wire.since,
            removed: wire.since == nil ? [] : (wire.removed ?? []).map { RequestID($0) }, digest: wire.digest)
        for item in wire.requests {
            switch item.entry() {
            case .success(var entry):
                for wire in item.withdrawnBy ?? [] {
                    switch wire.withdrawal() {
                    case .success(let withdrawal): entry.withdrawnBy.append(withdrawal)
                    case .failure(let problem):
                        plan.unreadableWithdrawals.append(
                            UnreadableRequest(identifier: item.identifier, reason: "withdrawnBy: \(problem)"))
                    }
                }
                plan.requests.append(entry)
            case .failure(let problem): plan.unreadable.append(problem)
            }
        }
        return plan
    }

    private static func isLowercaseHex(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }

    /// The digest of the requests (`PlanDigest`): what `digest` says when they are the whole plan.
    public var requestsDigest: String { PlanSync.digest(requests) }

    private static func field(of error: any Error) -> String {
        switch error as? DecodingError {
        case .keyNotFound(let key, let context)?: (context.codingPath + [key]).map(\.stringValue).joined(separator: ".")
        case .typeMismatch(_, let context)?, .valueNotFound(_, let context)?, .dataCorrupted(let context)?:
            context.codingPath.map(\.stringValue).joined(separator: ".")
        default: ""
        }
    }
}

/// A plan's body that cannot be read; `field` is its path (`requests.3.trigger`), empty for the
/// body as a whole.
public struct PlanReadError: Error, Hashable, Sendable, CustomStringConvertible {
    public var field: String
    public var reason: String

    public init(field: String, reason: String) {
        self.field = field
        self.reason = reason
    }

    public var description: String { field.isEmpty ? "plan: \(reason)" : "plan: \(field): \(reason)" }
}

/// A request of the plan this build cannot read, left out of it; or a withdrawal of one, which
/// withdraws nothing (`ServerPlan.unreadableWithdrawals`).
public struct UnreadableRequest: Error, Hashable, Sendable {
    public var identifier: String
    /// Which field, and what it held.
    public var reason: String
}

extension PlanWire.Request {
    /// The entry this request is, or why this build cannot read it.
    func entry() -> Result<ServerPlan.Entry, UnreadableRequest> {
        func unreadable(_ reason: String) -> Result<ServerPlan.Entry, UnreadableRequest> {
            .failure(UnreadableRequest(identifier: identifier, reason: reason))
        }
        guard !identifier.isEmpty else { return unreadable("identifier: empty") }
        guard let kind = NotificationKind(rawValue: kind) else { return unreadable("kind: \"\(kind)\"") }
        guard let category = NotificationCategoryID(rawValue: categoryIdentifier) else {
            return unreadable("categoryIdentifier: \"\(categoryIdentifier)\"")
        }
        guard let level = InterruptionLevel(rawValue: interruptionLevel) else {
            return unreadable("interruptionLevel: \"\(interruptionLevel)\"")
        }
        var notificationSound: NotificationSound?
        if let sound {
            guard sound.hasSuffix(".caf"), let known = NotificationSound(rawValue: String(sound.dropLast(4))) else {
                return unreadable("sound: \"\(sound)\"")
            }
            notificationSound = known
        }
        guard userInfo["kind"] == kind.rawValue else {
            return unreadable("userInfo.kind: \(userInfo["kind"].map { "\"\($0)\"" } ?? "missing"), not the kind")
        }
        guard let link = userInfo["link"] else { return unreadable("userInfo.link: missing") }
        guard let deepLink = DeepLink(url: link) else { return unreadable("userInfo.link: \"\(link)\"") }
        guard let next = Instant(iso8601: nextFireAt) else { return unreadable("nextFireAt: \"\(nextFireAt)\"") }
        let notificationTrigger: NotificationTrigger
        switch trigger.type {
        case "date":
            guard let at = trigger.fireAt.flatMap(Instant.init(iso8601:)) else {
                return unreadable("trigger.fireAt: \(trigger.fireAt.map { "\"\($0)\"" } ?? "missing")")
            }
            notificationTrigger = .date(at)
        case "calendar":
            guard let repeats = trigger.repeats else { return unreadable("trigger.repeats: missing") }
            var weekday: Weekday?
            if let number = trigger.weekday {
                guard let known = Weekday(rawValue: number) else { return unreadable("trigger.weekday: \(number)") }
                weekday = known
            }
            notificationTrigger = .calendar(
                CalendarMatch(
                    year: trigger.year, month: trigger.month, day: trigger.day, weekday: weekday, hour: trigger.hour,
                    minute: trigger.minute),
                repeats: repeats)
        case "timeInterval":
            guard let seconds = trigger.seconds else { return unreadable("trigger.seconds: missing") }
            guard let repeats = trigger.repeats else { return unreadable("trigger.repeats: missing") }
            notificationTrigger = .timeInterval(seconds: seconds, repeats: repeats)
        default:
            return unreadable("trigger.type: \"\(trigger.type)\"")
        }
        if let reason = notificationTrigger.invalidReason { return unreadable("trigger: \(reason)") }
        let content = NotificationContent(
            kind: kind, title: title, subtitle: subtitle, body: body, category: category, threadID: threadIdentifier,
            interruptionLevel: level, relevanceScore: relevanceScore, sound: notificationSound, badge: nil,
            deepLink: deepLink)
        return .success(
            ServerPlan.Entry(
                request: NotificationRequest(
                    identifier: RequestID(identifier), content: content, trigger: notificationTrigger),
                nextFireAt: next))
    }
}
