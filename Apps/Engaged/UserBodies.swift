import EngagedAPI
import Engagement
import Models
import Runtime
import Storage

extension UserUpdate {
    /// `PUT /v1/users/{id}`: some of the user's field groups, with the writer's `updatedAt`
    /// (nil: the server's clock).
    ///
    /// A field group is written when the body has any of its fields; within a written group an
    /// absent field takes its default (the group is versioned as a whole). Groups the body leaves
    /// out keep what is stored (for a new user: their defaults, unversioned). `timeZone` is always
    /// there, so every write carries the `timeZone` group. The preferences and times of day were
    /// decoded and checked by the engine's own types; the rest is checked here, 422 naming the field.
    init(_ body: Components.Schemas.User, id: UserID) throws(Problem) {
        guard ZoneRules.isValidIdentifier(body.timeZone) else {
            throw Problem.invalidField("timeZone", "unknown IANA time zone \"\(body.timeZone)\"")
        }
        // The defaults are UserProfile's.
        let defaults = UserProfile(id: "", displayName: "", timeZone: body.timeZone)
        let displayName = body.displayName ?? defaults.displayName
        guard displayName.count <= 200 else { throw Problem.invalidField("displayName", "at most 200 characters") }
        let locale: String
        switch LanguageTag.canonical(body.locale ?? defaults.locale) {
        case .success(let tag): locale = tag
        case .failure(let error): throw Problem.invalidField("locale", error.problem)
        }
        var updatedAtMilliseconds: Int64?
        if let text = body.updatedAt {
            guard let milliseconds = MillisecondTime.parse(text) else {
                throw Problem.invalidField(
                    "updatedAt", "expected an ISO 8601 instant such as 2027-03-01T07:00:00.250Z, got \"\(text)\"")
            }
            updatedAtMilliseconds = milliseconds
        }
        var groups: Set<UserFieldGroup> = [.timeZone]
        if body.displayName != nil || body.motivationalStyle != nil || body.privacyLevel != nil || body.locale != nil {
            groups.insert(.profile)
        }
        if body.absenceResponse != nil || body.preferredTimes != nil { groups.insert(.communication) }
        if body.preferences != nil { groups.insert(.preferences) }
        self.init(
            proposed: UserProfile(
                id: id, displayName: displayName, timeZone: body.timeZone,
                motivationalStyle: body.motivationalStyle ?? defaults.motivationalStyle,
                communication: CommunicationPreferences(
                    absenceResponse: body.absenceResponse ?? defaults.communication.absenceResponse,
                    preferredTimes: body.preferredTimes ?? defaults.communication.preferredTimes),
                privacyLevel: body.privacyLevel ?? defaults.privacyLevel,
                preferences: body.preferences ?? defaults.preferences, locale: locale),
            groups: groups, updatedAtMilliseconds: updatedAtMilliseconds)
    }
}

extension Components.Schemas.StoredUser {
    /// The user as it stands, in the shape of a write, with the version of each field group
    /// (`GET /v1/users/{id}`).
    init(profile: UserProfile, versions: UserVersions) {
        self.init(
            id: profile.id.rawValue, timeZone: profile.timeZone, displayName: profile.displayName,
            motivationalStyle: profile.motivationalStyle, absenceResponse: profile.communication.absenceResponse,
            preferredTimes: profile.communication.preferredTimes, privacyLevel: profile.privacyLevel,
            locale: profile.locale, preferences: profile.preferences, versions: .init(versions))
    }
}

extension Components.Schemas.UserView {
    /// The user after a write, and what the write did: whether it created the user, and its
    /// groups that now stand and those ignored because a newer write stands (`PUT`).
    init(_ result: UserPutResult) {
        let profile = result.profile
        self.init(
            id: profile.id.rawValue, created: result.created, timeZone: profile.timeZone,
            displayName: profile.displayName, motivationalStyle: profile.motivationalStyle,
            absenceResponse: profile.communication.absenceResponse,
            preferredTimes: profile.communication.preferredTimes, privacyLevel: profile.privacyLevel,
            locale: profile.locale, preferences: profile.preferences, versions: .init(result.versions),
            applied: result.applied.sorted { $0.rawValue < $1.rawValue },
            stale: result.stale.sorted { $0.rawValue < $1.rawValue })
    }
}

extension Components.Schemas.FieldGroupVersions {
    /// Per group, the `updatedAt` of the write that stands; null when never written (the default).
    init(_ versions: UserVersions) {
        func version(_ group: UserFieldGroup) -> Nullable<String> {
            Nullable(versions[group].map(MillisecondTime.format))
        }
        self.init(
            timeZone: version(.timeZone), profile: version(.profile), communication: version(.communication),
            preferences: version(.preferences))
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
