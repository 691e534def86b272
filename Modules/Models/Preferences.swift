/// What the user said about being contacted while away.
public enum AbsenceResponse: String, Codable, CaseIterable, Sendable {
    /// Send nothing while the user is away. Silence, never a nudge.
    case giveMeSpace = "give_me_space"
    /// One light check-in, then silence.
    case lightNudge = "light_nudge"
    /// Check in, and more firmly as the absence grows.
    case checkInOnMe = "check_in_on_me"
}

/// The tone of the coach's copy.
public enum MotivationalStyle: String, Codable, CaseIterable, Sendable {
    case encouraging, challenging, supportive
}

/// Who may see details of social notifications.
public enum PrivacyLevel: String, Codable, CaseIterable, Sendable {
    /// Everything is shown.
    case `public`
    /// A sender's name is shown only to mutual friends.
    case friendsOnly
    /// Only generic text is shown.
    case `private`
}

/// How often to remind the user to drink, within waking hours.
public enum HydrationFrequency: String, Codable, CaseIterable, Sendable {
    case hourly
    /// Every 2 hours.
    case biHourly = "bi_hourly"
    /// Every 8 hours.
    case triDaily = "tri_daily"

    public var intervalMinutes: Int {
        switch self {
        case .hourly: 60
        case .biHourly: 120
        case .triDaily: 480
        }
    }
}

/// Quiet hours in the user's local time. `start` is inclusive, `end` exclusive; when `end` is
/// not after `start` the window wraps past midnight (22:00-07:00). An empty `weekdays` means
/// every day; otherwise the window applies on the weekdays on which it *starts*.
public struct QuietHours: Hashable, Sendable {
    public var start: LocalTimeOfDay
    public var end: LocalTimeOfDay
    public var weekdays: Set<Weekday>

    /// Fails when `start == end`, which would mean either "never" or "always"; say which.
    public init(start: LocalTimeOfDay, end: LocalTimeOfDay, weekdays: Set<Weekday> = []) throws(InvalidValue) {
        guard start != end else {
            throw InvalidValue(
                field: "quietHours", problem: "start and end are both \(start); omit quietHours to have none")
        }
        self.start = start
        self.end = end
        self.weekdays = weekdays
    }

    public var wrapsMidnight: Bool { end < start }

    /// Length of the window in minutes.
    public var durationMinutes: Int {
        let length = end.minutesSinceMidnight - start.minutesSinceMidnight
        return length > 0 ? length : length + 1_440
    }

    /// Whether the wall time `local` falls inside quiet hours.
    public func contains(_ local: LocalDateTime) -> Bool {
        let minute = local.secondOfDay / 60
        let startMinute = start.minutesSinceMidnight
        let endMinute = end.minutesSinceMidnight
        let day = local.daysSinceEpoch
        if wrapsMidnight {
            if minute >= startMinute { return appliesOn(day) }
            if minute < endMinute { return appliesOn(day - 1) }
            return false
        }
        return minute >= startMinute && minute < endMinute && appliesOn(day)
    }

    /// The end of the quiet window that contains `local`, as a wall time; nil when outside.
    public func endOfWindow(containing local: LocalDateTime) -> LocalDateTime? {
        guard contains(local) else { return nil }
        let startsToday = local.secondOfDay / 60 >= start.minutesSinceMidnight
        let endDay = wrapsMidnight && startsToday ? local.daysSinceEpoch + 1 : local.daysSinceEpoch
        return LocalDateTime(daysSinceEpoch: endDay, time: end)
    }

    /// Whether a window starting on the local day `day` (days since 1970-01-01) applies.
    private func appliesOn(_ day: Int64) -> Bool { weekdays.isEmpty || weekdays.contains(Weekday(daysSinceEpoch: day)) }
}

extension QuietHours: Codable {
    enum CodingKeys: String, CodingKey, CaseIterable { case start, end, weekdays }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let start = try container.decode(LocalTimeOfDay.self, forKey: .start)
        let end = try container.decode(LocalTimeOfDay.self, forKey: .end)
        guard start != end else {
            throw decoder.invalid(CodingKeys.end, "equals start (\(start)); omit quietHours to have none")
        }
        try self.init(
            start: start, end: end, weekdays: container.decodeIfPresent(Set<Weekday>.self, forKey: .weekdays) ?? [])
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(start, forKey: .start)
        try container.encode(end, forKey: .end)
        if !weekdays.isEmpty { try container.encode(weekdays.sorted(), forKey: .weekdays) }
    }
}

/// A workout the user plans every week on a weekday at a local time.
public struct ScheduledWorkout: Codable, Hashable, Sendable {
    public var weekday: Weekday
    public var time: LocalTimeOfDay
    /// Free text such as "Run" or "Strength"; shown only to the user.
    public var type: String

    public init(weekday: Weekday, time: LocalTimeOfDay, type: String) {
        self.weekday = weekday
        self.time = time
        self.type = type
    }
}

/// Everything a user can set about notifications.
public struct NotificationPreferences: Hashable, Sendable {
    /// Master switch: false turns every kind off.
    public var enabled: Bool = true
    /// Per-kind setting; a kind not listed uses its `defaultSetting`.
    public var settings: [NotificationKind: NotificationSetting] {
        get { settingByKind }
        set {
            settingByKind = newValue
            disabledByOrdinal = Self.disabledBits(newValue)
        }
    }
    private var settingByKind: [NotificationKind: NotificationSetting] = [:]
    /// The kinds `settings` (or their defaults) disable, a bit per ordinal, kept with `settings`:
    /// `isEnabled` is asked for every candidate of every planning pass, too often to hash a kind
    /// to look it up.
    private var disabledByOrdinal: UInt64 = NotificationPreferences.disabledBits([:])

    private static func disabledBits(_ settings: [NotificationKind: NotificationSetting]) -> UInt64 {
        var bits: UInt64 = 0
        for kind in NotificationKind.allCases where (settings[kind] ?? kind.defaultSetting) == .disabled {
            bits |= 1 << UInt64(kind.ordinal)
        }
        return bits
    }
    /// Per-kind interruption level overrides; a kind not listed uses its default level.
    public var interruptionLevels: [NotificationKind: InterruptionLevel] = [:]
    /// When the morning greeting arrives (local time).
    public var morningTime: LocalTimeOfDay = LocalTimeOfDay(minutesSinceMidnight: 7 * 60)
    /// Waking hours bound hydration reminders: from `wakeTime` until before `sleepTime`.
    public var wakeTime: LocalTimeOfDay = LocalTimeOfDay(minutesSinceMidnight: 7 * 60)
    public var sleepTime: LocalTimeOfDay = LocalTimeOfDay(minutesSinceMidnight: 22 * 60)
    /// Planned weekly workouts.
    public var workoutSchedule: [ScheduledWorkout] = []
    /// Hydration reminders; nil turns them off.
    public var hydration: HydrationFrequency? = nil
    public var quietHours: QuietHours? = nil
    /// Rolling cap over any 60 minutes (default 10). At least 1.
    public var maxPerHour: Int = 10
    /// Cap per local calendar day; nil means no daily cap. At least 1 when set.
    public var maxPerDay: Int? = nil
    /// Batching window in minutes (default 15). At least 1.
    public var batchingWindowMinutes: Int = 15
    /// Minutes before a planned workout for the workout reminder.
    public var workoutReminderLeadMinutes: Int = 15
    /// Minutes before the habitual workout time for the pre-workout reminder (default 45).
    public var preWorkoutLeadMinutes: Int = 45
    /// Minutes after the workout for the post-workout check-in (default 120).
    public var postWorkoutDelayMinutes: Int = 120
    public var soundEnabled: Bool = true
    public var badgeEnabled: Bool = true
    /// When daily (and weekly) digests arrive, local time.
    public var digestTime: LocalTimeOfDay = LocalTimeOfDay(minutesSinceMidnight: 19 * 60)
    /// The day weekly digests arrive (default Sunday, the weekly review's day).
    public var weeklyDigestDay: Weekday = .sunday
    /// A batch closes early when it holds this many items.
    public var maxBatchItems: Int = 10
    /// Reminders the user set up, each with its own recurrence.
    public var reminders: [Reminder] = []
    /// The user's own daily attention budget (user-visible interruptions per local day, 1...100);
    /// nil: the app's (`EngineConfiguration.attentionBudget`).
    public var interruptionBudgetPerDay: Int? = nil

    public init() {}

    /// The effective setting of `kind`: disabled everywhere when the master switch is off.
    public func setting(for kind: NotificationKind) -> NotificationSetting {
        enabled ? settings[kind] ?? kind.defaultSetting : .disabled
    }

    /// `setting(for: kind) != .disabled`, without a look-up.
    public func isEnabled(_ kind: NotificationKind) -> Bool {
        enabled && disabledByOrdinal & (1 << UInt64(kind.ordinal)) == 0
    }

    public func interruptionLevel(for kind: NotificationKind) -> InterruptionLevel {
        interruptionLevels[kind] ?? kind.defaultInterruptionLevel
    }

    /// Kinds the user switched off.
    public var disabledKinds: [NotificationKind] { NotificationKind.allCases.filter { !isEnabled($0) } }

    /// Whether local `time` is in the user's waking hours, `wakeTime` ..< `sleepTime` (wrapping
    /// midnight if sleep comes first); outside them is the user's local night.
    public func isWakingTime(_ time: LocalTimeOfDay) -> Bool {
        wakeTime < sleepTime ? time >= wakeTime && time < sleepTime : time >= wakeTime || time < sleepTime
    }
}

extension NotificationPreferences: Codable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case enabled, settings, interruptionLevels, morningTime, wakeTime, sleepTime, workoutSchedule, hydration
        case quietHours, maxPerHour, maxPerDay, batchingWindowMinutes, workoutReminderLeadMinutes
        case preWorkoutLeadMinutes, postWorkoutDelayMinutes, soundEnabled, badgeEnabled, digestTime, weeklyDigestDay
        case maxBatchItems, reminders, interruptionBudgetPerDay
    }

    /// Every key is optional and falls back to the default; present keys are validated.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        var p = NotificationPreferences()
        p.enabled = try c.decodeIfPresent(Bool.self, forKey: .enabled) ?? p.enabled
        p.settings = try c.decodeIfPresent([NotificationKind: NotificationSetting].self, forKey: .settings) ?? [:]
        p.interruptionLevels =
            try c.decodeIfPresent([NotificationKind: InterruptionLevel].self, forKey: .interruptionLevels) ?? [:]
        p.morningTime = try c.decodeIfPresent(LocalTimeOfDay.self, forKey: .morningTime) ?? p.morningTime
        p.wakeTime = try c.decodeIfPresent(LocalTimeOfDay.self, forKey: .wakeTime) ?? p.wakeTime
        p.sleepTime = try c.decodeIfPresent(LocalTimeOfDay.self, forKey: .sleepTime) ?? p.sleepTime
        p.workoutSchedule = try c.decodeIfPresent([ScheduledWorkout].self, forKey: .workoutSchedule) ?? []
        p.hydration = try c.decodeIfPresent(HydrationFrequency.self, forKey: .hydration)
        p.quietHours = try c.decodeIfPresent(QuietHours.self, forKey: .quietHours)
        p.soundEnabled = try c.decodeIfPresent(Bool.self, forKey: .soundEnabled) ?? true
        p.digestTime = try c.decodeIfPresent(LocalTimeOfDay.self, forKey: .digestTime) ?? p.digestTime
        p.weeklyDigestDay = try c.decodeIfPresent(Weekday.self, forKey: .weeklyDigestDay) ?? p.weeklyDigestDay
        p.badgeEnabled = try c.decodeIfPresent(Bool.self, forKey: .badgeEnabled) ?? true

        func count(_ key: CodingKeys, default value: Int, range: ClosedRange<Int>) throws -> Int {
            guard let decoded = try c.decodeIfPresent(Int.self, forKey: key) else { return value }
            guard range.contains(decoded) else {
                throw decoder.invalid(key, "must be in \(range.lowerBound)...\(range.upperBound), got \(decoded)")
            }
            return decoded
        }
        p.maxPerHour = try count(.maxPerHour, default: p.maxPerHour, range: 1...60)
        p.batchingWindowMinutes = try count(.batchingWindowMinutes, default: p.batchingWindowMinutes, range: 1...1_440)
        p.reminders = try c.decodeIfPresent([Reminder].self, forKey: .reminders) ?? []
        if let duplicate = Dictionary(grouping: p.reminders, by: \.number).first(where: { $0.value.count > 1 })?.key {
            throw decoder.invalid(CodingKeys.reminders, "reminder number \(duplicate) is used twice")
        }
        p.maxBatchItems = try count(.maxBatchItems, default: p.maxBatchItems, range: 1...100)
        p.workoutReminderLeadMinutes = try count(.workoutReminderLeadMinutes, default: 15, range: 0...1_440)
        p.preWorkoutLeadMinutes = try count(.preWorkoutLeadMinutes, default: 45, range: 0...1_440)
        p.postWorkoutDelayMinutes = try count(.postWorkoutDelayMinutes, default: 120, range: 0...1_440)
        if c.contains(.maxPerDay), try !c.decodeNil(forKey: .maxPerDay) {
            p.maxPerDay = try count(.maxPerDay, default: 0, range: 1...1_000)
        }
        if c.contains(.interruptionBudgetPerDay), try !c.decodeNil(forKey: .interruptionBudgetPerDay) {
            p.interruptionBudgetPerDay = try count(.interruptionBudgetPerDay, default: 0, range: 1...100)
        }
        guard p.wakeTime < p.sleepTime else {
            throw decoder.invalid(CodingKeys.sleepTime, "must be after wakeTime (\(p.wakeTime)), got \(p.sleepTime)")
        }
        self = p
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(enabled, forKey: .enabled)
        try c.encode(settings, forKey: .settings)
        try c.encode(interruptionLevels, forKey: .interruptionLevels)
        try c.encode(morningTime, forKey: .morningTime)
        try c.encode(wakeTime, forKey: .wakeTime)
        try c.encode(sleepTime, forKey: .sleepTime)
        try c.encode(workoutSchedule, forKey: .workoutSchedule)
        try c.encodeIfPresent(hydration, forKey: .hydration)
        try c.encodeIfPresent(quietHours, forKey: .quietHours)
        try c.encode(maxPerHour, forKey: .maxPerHour)
        try c.encodeIfPresent(maxPerDay, forKey: .maxPerDay)
        try c.encode(batchingWindowMinutes, forKey: .batchingWindowMinutes)
        try c.encode(workoutReminderLeadMinutes, forKey: .workoutReminderLeadMinutes)
        try c.encode(preWorkoutLeadMinutes, forKey: .preWorkoutLeadMinutes)
        try c.encode(postWorkoutDelayMinutes, forKey: .postWorkoutDelayMinutes)
        try c.encode(soundEnabled, forKey: .soundEnabled)
        try c.encode(badgeEnabled, forKey: .badgeEnabled)
        try c.encode(digestTime, forKey: .digestTime)
        try c.encode(weeklyDigestDay, forKey: .weeklyDigestDay)
        try c.encode(maxBatchItems, forKey: .maxBatchItems)
        try c.encode(reminders, forKey: .reminders)
        try c.encodeIfPresent(interruptionBudgetPerDay, forKey: .interruptionBudgetPerDay)
    }
}

/// How the user wants to be contacted: what to do while they are away, and when.
public struct CommunicationPreferences: Codable, Hashable, Sendable {
    public var absenceResponse: AbsenceResponse
    /// Local times the user likes to hear from the coach; the first one is used for nudges.
    public var preferredTimes: [LocalTimeOfDay]

    public init(absenceResponse: AbsenceResponse, preferredTimes: [LocalTimeOfDay] = []) {
        self.absenceResponse = absenceResponse
        self.preferredTimes = preferredTimes
    }
}

/// A user as the engine sees them.
public struct UserProfile: Hashable, Sendable {
    public var id: UserID
    public var displayName: String
    /// IANA time zone identifier, validated on decode.
    public var timeZone: String
    public var motivationalStyle: MotivationalStyle
    public var communication: CommunicationPreferences
    public var privacyLevel: PrivacyLevel
    public var preferences: NotificationPreferences
    /// The user's language, a BCP 47 tag in canonical case (`en`, `de-DE`; see `LanguageTag`):
    /// templates and grouped copy come from that language's template file (exact tag, then the
    /// language alone, then English).
    public var locale: String

    /// The locale of a profile that names none (and of every profile stored before locales).
    public static let defaultLocale = "en"

    public init(
        id: UserID, displayName: String, timeZone: String, motivationalStyle: MotivationalStyle = .encouraging,
        communication: CommunicationPreferences = CommunicationPreferences(absenceResponse: .lightNudge),
        privacyLevel: PrivacyLevel = .friendsOnly, preferences: NotificationPreferences = NotificationPreferences(),
        locale: String = UserProfile.defaultLocale
    ) {
        self.id = id
        self.displayName = displayName
        self.timeZone = timeZone
        self.motivationalStyle = motivationalStyle
        self.communication = communication
        self.privacyLevel = privacyLevel
        self.preferences = preferences
        self.locale = locale
    }

    /// The first name, for copy ("Good morning, Ana").
    public var firstName: String { String(displayName.split(separator: " ").first ?? "") }
}

extension UserProfile: Codable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case id, displayName, timeZone, motivationalStyle, communication, privacyLevel, preferences, locale
    }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(UserID.self, forKey: .id)
        guard !id.isEmpty else { throw decoder.invalid(CodingKeys.id, "must not be empty") }
        displayName = try c.decode(String.self, forKey: .displayName)
        timeZone = try c.decode(String.self, forKey: .timeZone)
        guard ZoneRules.isValidIdentifier(timeZone) else {
            throw decoder.invalid(CodingKeys.timeZone, "unknown IANA time zone \"\(timeZone)\"")
        }
        motivationalStyle = try c.decodeIfPresent(MotivationalStyle.self, forKey: .motivationalStyle) ?? .encouraging
        communication =
            try c.decodeIfPresent(CommunicationPreferences.self, forKey: .communication)
            ?? CommunicationPreferences(absenceResponse: .lightNudge)
        privacyLevel = try c.decodeIfPresent(PrivacyLevel.self, forKey: .privacyLevel) ?? .friendsOnly
        preferences =
            try c.decodeIfPresent(NotificationPreferences.self, forKey: .preferences) ?? NotificationPreferences()
        // Absent in every profile stored before locales existed: those read as the default.
        let locale = try c.decodeIfPresent(String.self, forKey: .locale) ?? Self.defaultLocale
        switch LanguageTag.canonical(locale) {
        case .success(let canonical): self.locale = canonical
        case .failure(let error): throw decoder.invalid(CodingKeys.locale, error.problem)
        }
    }
}
