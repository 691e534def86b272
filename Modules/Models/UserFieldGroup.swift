/// The parts of a user that are versioned separately for last-write-wins, each group on its
/// own: a write to one group never undoes a newer write to another.
///
/// - `timeZone`: the IANA zone.
/// - `profile`: displayName, motivationalStyle, privacyLevel, locale.
/// - `communication`: absenceResponse, preferredTimes.
/// - `preferences`: the notification preferences, as one value.
///
/// A value type of the models (not of the stores) so that the API's types name it without
/// linking a store: a client learns which groups a user write applied.
public enum UserFieldGroup: String, CaseIterable, Codable, Hashable, Sendable {
    case timeZone, profile, communication, preferences
}
