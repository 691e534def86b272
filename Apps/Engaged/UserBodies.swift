import Engagement
import Models
import Runtime
import Storage

/// `PUT /v1/users/{id}`: some of the user's field groups, with the writer's `updatedAt`.
///
/// A field group is written when the body has any of its fields; within a written group an
/// absent field takes its default (the group is versioned as a whole). Groups the body leaves
/// out keep what is stored (for a new user: their defaults, unversioned). `timeZone` is always
/// there, so every write carries the `timeZone` group.
struct UserBody: Decodable {
    var timeZone: String
    var displayName: String
    var motivationalStyle: MotivationalStyle
    var privacyLevel: PrivacyLevel
    var locale: String
    var absenceResponse: AbsenceResponse
    var preferredTimes: [LocalTimeOfDay]
    var preferences: NotificationPreferences
    var groups: Set<UserFieldGroup>
    /// Milliseconds since 1970; nil: the server's clock.
    var updatedAtMilliseconds: Int64?

    static let groupFields: [UserFieldGroup: Set<String>] = [
        .timeZone: ["timeZone"],
        .profile: ["displayName", "motivationalStyle", "privacyLevel", "locale"],
        .communication: ["absenceResponse", "preferredTimes"],
        .preferences: ["preferences"],
    ]

    init(from decoder: any Decoder) throws {
        let path = decoder.codingPath
        let c = try decoder.container(keyedBy: AnyKey.self)
        try c.rejectKeys(outside: Set(Self.groupFields.values.joined()).union(["updatedAt"]), at: path)
        timeZone = try c.decode("timeZone")
        guard ZoneRules.isValidIdentifier(timeZone) else {
            throw invalidValue(path, "timeZone", "unknown IANA time zone \"\(timeZone)\"")
        }
        // The defaults are UserProfile's.
        let defaults = UserProfile(id: "", displayName: "", timeZone: timeZone)
        displayName = try c.decodeIfPresent("displayName") ?? defaults.displayName
        guard displayName.count <= 200 else { throw invalidValue(path, "displayName", "at most 200 characters") }
        motivationalStyle = try c.decodeIfPresent("motivationalStyle") ?? defaults.motivationalStyle
        privacyLevel = try c.decodeIfPresent("privacyLevel") ?? defaults.privacyLevel
        switch LanguageTag.canonical(try c.decodeIfPresent("locale") ?? defaults.locale) {
        case .success(let tag): locale = tag
        case .failure(let error): throw invalidValue(path, "locale", error.problem)
        }
        absenceResponse = try c.decodeIfPresent("absenceResponse") ?? defaults.communication.absenceResponse
        preferredTimes = try c.decodeIfPresent("preferredTimes") ?? defaults.communication.preferredTimes
        preferences = try c.decodeIfPresent("preferences") ?? defaults.preferences
        let present = Set(c.allKeys.map(\.stringValue))
        groups = Set(Self.groupFields.filter { !$0.value.isDisjoint(with: present) }.keys)
        if let text: String = try c.decodeIfPresent("updatedAt") {
            guard let milliseconds = MillisecondTime.parse(text) else {
                throw invalidValue(
                    path, "updatedAt", "expected an ISO 8601 instant such as 2027-03-01T07:00:00.250Z, got \"\(text)\"")
            }
            updatedAtMilliseconds = milliseconds
        }
    }

    func update(id: UserID) -> UserUpdate {
        UserUpdate(
            proposed: UserProfile(
                id: id, displayName: displayName, timeZone: timeZone, motivationalStyle: motivationalStyle,
                communication: CommunicationPreferences(
                    absenceResponse: absenceResponse, preferredTimes: preferredTimes),
                privacyLevel: privacyLevel, preferences: preferences, locale: locale),
            groups: groups, updatedAtMilliseconds: updatedAtMilliseconds)
    }
}

/// The user as it stands, in the shape of a write, with the version of each field group: the
/// answer of `GET /v1/users/{id}` (`StoredUser`), and with what became of the request's groups
/// that of `PUT` (`UserView`).
struct UserView: Encodable {
    /// What a write did: whether it created the user, and its groups that now stand and those
    /// ignored because a newer write stands.
    struct WriteOutcome {
        var created: Bool
        var applied: [String]
        var stale: [String]
    }

    var id: String
    var timeZone: String
    var displayName: String
    var motivationalStyle: MotivationalStyle
    var privacyLevel: PrivacyLevel
    var locale: String
    var absenceResponse: AbsenceResponse
    var preferredTimes: [LocalTimeOfDay]
    var preferences: NotificationPreferences
    /// Per group, the `updatedAt` of the write that stands (null: never written, the default).
    var versions: [String: String?]
    /// Nil for a read.
    var write: WriteOutcome?

    init(profile: UserProfile, versions: UserVersions) {
        id = profile.id.rawValue
        timeZone = profile.timeZone
        displayName = profile.displayName
        motivationalStyle = profile.motivationalStyle
        privacyLevel = profile.privacyLevel
        locale = profile.locale
        absenceResponse = profile.communication.absenceResponse
        preferredTimes = profile.communication.preferredTimes
        preferences = profile.preferences
        self.versions = Dictionary(
            uniqueKeysWithValues: UserFieldGroup.allCases.map {
                ($0.rawValue, versions[$0].map(MillisecondTime.format))
            })
    }

    init(_ result: UserPutResult) {
        self.init(profile: result.profile, versions: result.versions)
        write = WriteOutcome(
            created: result.created, applied: result.applied.map(\.rawValue).sorted(),
            stale: result.stale.map(\.rawValue).sorted())
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: AnyKey.self)
        try c.encode(id, forKey: AnyKey("id"))
        if let write { try c.encode(write.created, forKey: AnyKey("created")) }
        try c.encode(timeZone, forKey: AnyKey("timeZone"))
        try c.encode(displayName, forKey: AnyKey("displayName"))
        try c.encode(motivationalStyle, forKey: AnyKey("motivationalStyle"))
        try c.encode(privacyLevel, forKey: AnyKey("privacyLevel"))
        try c.encode(locale, forKey: AnyKey("locale"))
        try c.encode(absenceResponse, forKey: AnyKey("absenceResponse"))
        try c.encode(preferredTimes, forKey: AnyKey("preferredTimes"))
        try c.encode(preferences, forKey: AnyKey("preferences"))
        var versionsContainer = c.nestedContainer(keyedBy: AnyKey.self, forKey: AnyKey("versions"))
        for (group, stamp) in versions {
            try versionsContainer.encode(stamp, forKey: AnyKey(group))  // null, not absent
        }
        if let write {
            try c.encode(write.applied, forKey: AnyKey("applied"))
            try c.encode(write.stale, forKey: AnyKey("stale"))
        }
    }
}

/// `updatedAt` instants at millisecond precision (ISO 8601, UTC or with an offset of at most 14
/// hours, as `Instant` reads them; digits past the third of a fraction are dropped).
enum MillisecondTime {
    static func parse(_ text: String) -> Int64? {
        let text = text.uppercased()  // RFC 3339 allows `t` and `z`
        var whole = text
        var milliseconds: Int64 = 0
        if let dot = text.firstIndex(of: ".") {
            let digits = text[text.index(after: dot)...].prefix { $0.isASCII && $0.isNumber }
            guard !digits.isEmpty else { return nil }
            let firstThree = String(digits.prefix(3))
            milliseconds = (Int64(firstThree) ?? 0) * [100, 10, 1][firstThree.count - 1]
            whole = String(text[..<dot]) + String(text[digits.endIndex...])
        }
        guard let instant = Instant(iso8601: whole) else { return nil }
        let (product, overflow) = instant.secondsSinceEpoch.multipliedReportingOverflow(by: 1_000)
        guard !overflow else { return nil }
        return product + milliseconds
    }

    /// `2027-03-01T07:00:00.250Z`: always three digits of fraction.
    static func format(_ milliseconds: Int64) -> String {
        let seconds = milliseconds >= 0 ? milliseconds / 1_000 : (milliseconds - 999) / 1_000
        let fraction = milliseconds - seconds * 1_000
        let text = Instant(secondsSinceEpoch: seconds).iso8601
        let digits = String(fraction)
        return String(text.dropLast()) + "." + String(repeating: "0", count: 3 - digits.count) + digits + "Z"
    }
}
