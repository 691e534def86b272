import Foundation
import Testing

@testable import Models

func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
    try JSONDecoder().decode(type, from: Data(json.utf8))
}

/// The `fieldMessage` of the DecodingError that decoding `json` throws; nil (and an issue) when
/// decoding succeeds or throws something else.
func decodingFailure<T: Decodable>(_ type: T.Type, _ json: String) -> String? {
    do {
        _ = try decode(type, json)
        Issue.record("decoded \(json)")
    } catch let error as DecodingError {
        return error.fieldMessage
    } catch {
        Issue.record("unexpected error \(error)")
    }
    return nil
}

private func time(_ text: String) -> LocalTimeOfDay { LocalTimeOfDay(text)! }

/// A wall time on 2027-03-01 (a Monday) plus `dayOffset` days.
private func at(_ clock: String, dayOffset: Int = 0) -> LocalDateTime {
    LocalDateTime(date: LocalDate(year: 2027, month: 3, day: 1).adding(days: dayOffset), time: time(clock))
}

@Suite("QuietHours")
struct QuietHoursTests {
    @Test func wrappingMidnight() throws {
        let quiet = try QuietHours(start: time("22:00"), end: time("07:00"))
        #expect(quiet.wrapsMidnight)
        #expect(quiet.durationMinutes == 540)
        for inside in ["22:00", "23:59", "00:00", "03:30", "06:59"] {
            #expect(quiet.contains(at(inside)), "\(inside)")
        }
        for outside in ["07:00", "12:00", "21:59", "07:01"] {
            #expect(!quiet.contains(at(outside)), "\(outside)")
        }
        // Seconds within the last quiet minute still count as quiet.
        #expect(quiet.contains(LocalDateTime(date: at("06:59").date, secondOfDay: 6 * 3_600 + 59 * 60 + 59)))
    }

    @Test func endOfWrappingWindow() throws {
        let quiet = try QuietHours(start: time("22:00"), end: time("07:00"))
        #expect(quiet.endOfWindow(containing: at("23:00")) == at("07:00", dayOffset: 1))
        #expect(quiet.endOfWindow(containing: at("22:00")) == at("07:00", dayOffset: 1))
        #expect(quiet.endOfWindow(containing: at("00:00")) == at("07:00"))
        #expect(quiet.endOfWindow(containing: at("06:59")) == at("07:00"))
        #expect(quiet.endOfWindow(containing: at("07:00")) == nil)
        #expect(quiet.endOfWindow(containing: at("15:00")) == nil)
        // Across the end of a month and a year.
        let newYearsEve = LocalDateTime(date: LocalDate(year: 2027, month: 12, day: 31), time: time("23:30"))
        #expect(
            quiet.endOfWindow(containing: newYearsEve)
                == LocalDateTime(date: LocalDate(year: 2028, month: 1, day: 1), time: time("07:00")))
    }

    @Test func withinOneDay() throws {
        let quiet = try QuietHours(start: time("13:00"), end: time("15:00"))
        #expect(!quiet.wrapsMidnight)
        #expect(quiet.durationMinutes == 120)
        #expect(quiet.contains(at("13:00")))
        #expect(quiet.contains(at("14:59")))
        #expect(!quiet.contains(at("15:00")))
        #expect(!quiet.contains(at("12:59")))
        #expect(!quiet.contains(at("00:00")))
        #expect(quiet.endOfWindow(containing: at("13:30")) == at("15:00"))
        #expect(quiet.endOfWindow(containing: at("16:00")) == nil)
    }

    @Test func weekdaysApplyToTheNightTheWindowStarts() throws {
        // Quiet on Friday and Saturday nights. 2027-03-05 is a Friday.
        let quiet = try QuietHours(start: time("22:00"), end: time("07:00"), weekdays: [.friday, .saturday])
        let friday = 4
        #expect(LocalDate(year: 2027, month: 3, day: 1).adding(days: friday).weekday == .friday)
        #expect(quiet.contains(at("23:00", dayOffset: friday)))  // Friday night
        #expect(quiet.contains(at("03:00", dayOffset: friday + 1)))  // Saturday early: started Friday
        #expect(quiet.contains(at("23:00", dayOffset: friday + 1)))  // Saturday night
        #expect(quiet.contains(at("03:00", dayOffset: friday + 2)))  // Sunday early: started Saturday
        #expect(!quiet.contains(at("23:00", dayOffset: friday + 2)))  // Sunday night
        #expect(!quiet.contains(at("03:00", dayOffset: friday + 3)))  // Monday early: started Sunday
        #expect(!quiet.contains(at("03:00", dayOffset: friday)))  // Friday early: started Thursday
        #expect(!quiet.contains(at("12:00", dayOffset: friday)))
        #expect(quiet.endOfWindow(containing: at("03:00", dayOffset: friday + 2)) == at("07:00", dayOffset: friday + 2))
        #expect(quiet.endOfWindow(containing: at("03:00", dayOffset: friday + 3)) == nil)
    }

    @Test func weekdaysForADaytimeWindow() throws {
        let quiet = try QuietHours(start: time("09:00"), end: time("17:00"), weekdays: [.monday])
        #expect(quiet.contains(at("10:00")))  // Monday
        #expect(!quiet.contains(at("10:00", dayOffset: 1)))  // Tuesday
    }

    @Test func startEqualToEndIsRejected() {
        #expect(throws: InvalidValue.self) { try QuietHours(start: time("22:00"), end: time("22:00")) }
        do {
            _ = try QuietHours(start: time("07:00"), end: time("07:00"))
            Issue.record("accepted start == end")
        } catch {
            #expect(error.field == "quietHours")
            #expect(error.description.contains("07:00"))
        }
        let message = decodingFailure(QuietHours.self, #"{"start": "22:00", "end": "22:00"}"#)
        #expect(message?.hasPrefix("end:") == true, "\(message ?? "")")
    }

    @Test func decoding() throws {
        let quiet = try decode(QuietHours.self, #"{"start": "22:00", "end": "7:00", "weekdays": [6, 7]}"#)
        #expect(quiet.start == time("22:00") && quiet.end == time("07:00"))
        #expect(quiet.weekdays == [.friday, .saturday])
        #expect(try decode(QuietHours.self, #"{"start": "22:00", "end": "07:00"}"#).weekdays.isEmpty)
        #expect(
            decodingFailure(QuietHours.self, #"{"start": "22:00", "end": "07:00", "days": [1]}"#)?.hasPrefix("days:")
                == true)
        #expect(decodingFailure(QuietHours.self, #"{"start": "22:00"}"#)?.hasPrefix("end:") == true)
        #expect(decodingFailure(QuietHours.self, #"{"start": "10pm", "end": "07:00"}"#)?.hasPrefix("start:") == true)
        #expect(decodingFailure(QuietHours.self, #"{"start": "22:00", "end": "07:00", "weekdays": [8]}"#) != nil)
    }

    @Test func codableRoundTrip() throws {
        for quiet in [
            try QuietHours(start: time("22:00"), end: time("07:00")),
            try QuietHours(start: time("12:00"), end: time("13:30"), weekdays: [.sunday, .wednesday]),
        ] {
            let data = try JSONEncoder().encode(quiet)
            #expect(try JSONDecoder().decode(QuietHours.self, from: data) == quiet)
        }
    }
}

@Suite("NotificationPreferences decoding")
struct NotificationPreferencesTests {
    @Test func emptyObjectGivesDefaults() throws {
        let preferences = try decode(NotificationPreferences.self, "{}")
        #expect(preferences == NotificationPreferences())
        #expect(preferences.enabled)
        #expect(preferences.maxPerHour == 10)
        #expect(preferences.maxPerDay == nil)
        #expect(preferences.batchingWindowMinutes == 15)
        #expect(preferences.morningTime == time("07:00"))
        #expect(preferences.wakeTime == time("07:00"))
        #expect(preferences.sleepTime == time("22:00"))
        #expect(preferences.quietHours == nil)
        #expect(preferences.hydration == nil)
        #expect(preferences.workoutReminderLeadMinutes == 15)
        #expect(preferences.preWorkoutLeadMinutes == 45)
        #expect(preferences.postWorkoutDelayMinutes == 120)
        #expect(preferences.soundEnabled && preferences.badgeEnabled)
    }

    @Test func everyFieldDecodes() throws {
        let json = """
            {
              "enabled": true,
              "settings": {"workoutKudos": "immediate", "achievement": "disabled"},
              "interruptionLevels": {"hydration": "passive"},
              "morningTime": "6:30", "wakeTime": "06:00", "sleepTime": "23:00",
              "workoutSchedule": [{"weekday": 2, "time": "18:00", "type": "Run"}],
              "hydration": "bi_hourly",
              "quietHours": {"start": "22:30", "end": "06:00"},
              "maxPerHour": 4, "maxPerDay": 12, "batchingWindowMinutes": 30,
              "workoutReminderLeadMinutes": 10, "preWorkoutLeadMinutes": 60, "postWorkoutDelayMinutes": 90,
              "soundEnabled": false, "badgeEnabled": false
            }
            """
        let p = try decode(NotificationPreferences.self, json)
        #expect(p.setting(for: .workoutKudos) == .immediate)
        #expect(p.setting(for: .achievement) == .disabled)
        #expect(p.interruptionLevel(for: .hydration) == .passive)
        #expect(p.morningTime == time("06:30") && p.wakeTime == time("06:00") && p.sleepTime == time("23:00"))
        #expect(p.workoutSchedule == [ScheduledWorkout(weekday: .monday, time: time("18:00"), type: "Run")])
        #expect(p.hydration == .biHourly)
        #expect(p.quietHours == (try QuietHours(start: time("22:30"), end: time("06:00"))))
        #expect(p.maxPerHour == 4 && p.maxPerDay == 12 && p.batchingWindowMinutes == 30)
        #expect(p.workoutReminderLeadMinutes == 10 && p.preWorkoutLeadMinutes == 60 && p.postWorkoutDelayMinutes == 90)
        #expect(!p.soundEnabled && !p.badgeEnabled)
        // And it survives a round trip.
        let data = try JSONEncoder().encode(p)
        #expect(try JSONDecoder().decode(NotificationPreferences.self, from: data) == p)
    }

    @Test func defaultsRoundTrip() throws {
        let data = try JSONEncoder().encode(NotificationPreferences())
        #expect(try JSONDecoder().decode(NotificationPreferences.self, from: data) == NotificationPreferences())
    }

    @Test(arguments: [
        (#"{"maxPerHr": 3}"#, "maxPerHr"),
        (#"{"enabled": true, "quietHour": null}"#, "quietHour"),
        (#"{"quietHours": {"start": "22:00", "end": "07:00", "wkdays": []}}"#, "quietHours.wkdays"),
        (#"{"maxPerHour": 0}"#, "maxPerHour"),
        (#"{"maxPerHour": 61}"#, "maxPerHour"),
        (#"{"maxPerHour": -1}"#, "maxPerHour"),
        (#"{"batchingWindowMinutes": 0}"#, "batchingWindowMinutes"),
        (#"{"batchingWindowMinutes": -5}"#, "batchingWindowMinutes"),
        (#"{"maxPerDay": 0}"#, "maxPerDay"),
        (#"{"preWorkoutLeadMinutes": -1}"#, "preWorkoutLeadMinutes"),
        (#"{"morningTime": "7am"}"#, "morningTime"),
        (#"{"wakeTime": "24:00"}"#, "wakeTime"),
        (#"{"sleepTime": "12:60"}"#, "sleepTime"),
        (#"{"morningTime": "0700"}"#, "morningTime"),
        (#"{"wakeTime": "08:00", "sleepTime": "07:00"}"#, "sleepTime"),
        (#"{"wakeTime": "22:00", "sleepTime": "22:00"}"#, "sleepTime"),
        (#"{"sleepTime": "06:00"}"#, "sleepTime"),
        (#"{"hydration": "sometimes"}"#, "hydration"),
        (#"{"settings": {"bogusKind": "disabled"}}"#, "settings"),
        (#"{"settings": {"mention": "loud"}}"#, "settings.mention"),
        (#"{"enabled": "yes"}"#, "enabled"),
        (#"{"workoutSchedule": [{"weekday": 2, "time": "25:00", "type": "Run"}]}"#, "workoutSchedule[0].time"),
    ])
    func invalidInputNamesTheField(json: String, field: String) {
        let message = decodingFailure(NotificationPreferences.self, json)
        #expect(message?.hasPrefix(field) == true, "\(json) -> \(message ?? "nil")")
    }

    @Test func unknownKeyMessageListsTheKey() throws {
        let message = try #require(decodingFailure(NotificationPreferences.self, #"{"maxPerHr": 3}"#))
        #expect(message.contains("unknown key \"maxPerHr\""))
        #expect(message.contains("maxPerHour"))  // the expected keys are listed
    }

    @Test func rangeMessageGivesTheValue() throws {
        let message = try #require(decodingFailure(NotificationPreferences.self, #"{"batchingWindowMinutes": -5}"#))
        #expect(message.contains("-5"))
        #expect(message.contains("1...1440"))
    }

    @Test func maxPerDayNullMeansNoCap() throws {
        #expect(try decode(NotificationPreferences.self, #"{"maxPerDay": null}"#).maxPerDay == nil)
        #expect(try decode(NotificationPreferences.self, #"{"maxPerDay": 1}"#).maxPerDay == 1)
    }

    @Test func boundaryValuesAreAccepted() throws {
        let p = try decode(NotificationPreferences.self, #"{"maxPerHour": 1, "batchingWindowMinutes": 1440}"#)
        #expect(p.maxPerHour == 1 && p.batchingWindowMinutes == 1_440)
        #expect(try decode(NotificationPreferences.self, #"{"maxPerHour": 60}"#).maxPerHour == 60)
        #expect(
            try decode(NotificationPreferences.self, #"{"wakeTime": "00:00", "sleepTime": "23:59"}"#).wakeTime
                == time("00:00"))
    }

    @Test func settingsFollowTheMasterSwitch() throws {
        var p = NotificationPreferences()
        #expect(p.setting(for: .workoutKudos) == .batched)  // its default
        #expect(p.setting(for: .leaderboardChange) == .weekly)
        #expect(p.disabledKinds.isEmpty)
        p.settings[.hydration] = .disabled
        #expect(!p.isEnabled(.hydration))
        #expect(p.disabledKinds == [.hydration])
        p.enabled = false
        #expect(NotificationKind.allCases.allSatisfy { p.setting(for: $0) == .disabled })
        #expect(p.disabledKinds == NotificationKind.allCases)
        #expect(p.interruptionLevel(for: .securityAlert) == .critical)
        p.interruptionLevels[.securityAlert] = .timeSensitive
        #expect(p.interruptionLevel(for: .securityAlert) == .timeSensitive)
    }

    @Test func hydrationIntervals() {
        #expect(HydrationFrequency.allCases.map(\.intervalMinutes) == [60, 120, 480])
        #expect(HydrationFrequency.biHourly.rawValue == "bi_hourly")
    }
}

@Suite("UserProfile decoding")
struct UserProfileTests {
    private func json(timeZone: String, extra: String = "") -> String {
        #"{"id": "u1", "displayName": "Ana Lima", "timeZone": "\#(timeZone)"\#(extra)}"#
    }

    @Test func minimalProfileGetsDefaults() throws {
        let user = try decode(UserProfile.self, json(timeZone: "Europe/Lisbon"))
        #expect(user.id == "u1")
        #expect(user.firstName == "Ana")
        #expect(user.timeZone == "Europe/Lisbon")
        #expect(user.motivationalStyle == .encouraging)
        #expect(user.communication == CommunicationPreferences(absenceResponse: .lightNudge))
        #expect(user.privacyLevel == .friendsOnly)
        #expect(user.preferences == NotificationPreferences())
    }

    @Test(arguments: ["Mars/Olympus", "EST", "PST", "GMT+5", "Etc/GMT+5", "", "America/Nowhere"])
    func unknownOrAbbreviatedTimeZonesAreRejected(timeZone: String) {
        let message = decodingFailure(UserProfile.self, json(timeZone: timeZone))
        #expect(message?.hasPrefix("timeZone:") == true, "\(message ?? "nil")")
        #expect(message?.contains("\"\(timeZone)\"") == true)
    }

    @Test func nestedErrorsCarryTheFullPath() {
        let quiet = #", "preferences": {"quietHours": {"start": "22:00", "end": "07:00", "wkdays": []}}"#
        #expect(
            decodingFailure(UserProfile.self, json(timeZone: "UTC", extra: quiet))?
                .hasPrefix("preferences.quietHours.wkdays:") == true)
        let cap = #", "preferences": {"maxPerHour": 0}"#
        #expect(
            decodingFailure(UserProfile.self, json(timeZone: "UTC", extra: cap))?.hasPrefix("preferences.maxPerHour:")
                == true)
        let absence = #", "communication": {"absenceResponse": "never"}"#
        #expect(
            decodingFailure(UserProfile.self, json(timeZone: "UTC", extra: absence))?
                .hasPrefix("communication.absenceResponse:") == true)
    }

    @Test func otherRejections() {
        #expect(
            decodingFailure(UserProfile.self, json(timeZone: "UTC", extra: #", "nickname": "A""#))?.hasPrefix(
                "nickname:") == true)
        #expect(
            decodingFailure(UserProfile.self, #"{"id": "", "displayName": "A", "timeZone": "UTC"}"#)?.hasPrefix("id:")
                == true)
        #expect(
            decodingFailure(UserProfile.self, #"{"id": "u1", "timeZone": "UTC"}"#)?.hasPrefix("displayName:") == true)
        #expect(decodingFailure(UserProfile.self, json(timeZone: "UTC", extra: #", "privacyLevel": "secret""#)) != nil)
    }

    @Test func fullProfileRoundTrips() throws {
        var preferences = NotificationPreferences()
        preferences.maxPerDay = 8
        preferences.quietHours = try QuietHours(start: time("21:00"), end: time("06:30"), weekdays: [.sunday])
        let user = UserProfile(
            id: "u2", displayName: "Kai", timeZone: "Asia/Kathmandu", motivationalStyle: .challenging,
            communication: CommunicationPreferences(absenceResponse: .giveMeSpace, preferredTimes: [time("08:15")]),
            privacyLevel: .private, preferences: preferences)
        let data = try JSONEncoder().encode(user)
        #expect(try JSONDecoder().decode(UserProfile.self, from: data) == user)
        #expect(user.firstName == "Kai")
        #expect(UserProfile(id: "x", displayName: "", timeZone: "UTC").firstName == "")
    }

    @Test func seedSpellingsOfEnums() throws {
        #expect(AbsenceResponse.allCases.map(\.rawValue) == ["give_me_space", "light_nudge", "check_in_on_me"])
        let privacy = try decode([PrivacyLevel].self, #"["public", "friendsOnly", "private"]"#)
        #expect(privacy == [.public, .friendsOnly, .private])
    }
}

@Suite struct WakingHoursTests {
    @Test(arguments: [
        ("07:00", "22:00", "06:59", false), ("07:00", "22:00", "07:00", true), ("07:00", "22:00", "21:59", true),
        ("07:00", "22:00", "22:00", false), ("07:00", "22:00", "00:00", false),
        // A night-shift worker whose waking hours wrap midnight.
        ("17:00", "08:00", "23:30", true), ("17:00", "08:00", "03:00", true), ("17:00", "08:00", "12:00", false),
    ])
    func theLocalNightIsOutsideTheWakingHours(wake: String, sleep: String, time: String, waking: Bool) {
        var preferences = NotificationPreferences()
        preferences.wakeTime = LocalTimeOfDay(wake)!
        preferences.sleepTime = LocalTimeOfDay(sleep)!
        #expect(preferences.isWakingTime(LocalTimeOfDay(time)!) == waking)
    }
}

/// `isEnabled` answers from bits kept with `settings`: the same as `setting(for:) != .disabled`
/// however the settings were made (defaults, assigned whole, changed in place, decoded, the
/// master switch off).
@Suite struct KindEnablementTests {
    private func expectAgreement(_ preferences: NotificationPreferences, _ note: String) {
        for kind in NotificationKind.allCases {
            #expect(
                preferences.isEnabled(kind) == (preferences.setting(for: kind) != .disabled), "\(kind) \(note)")
        }
    }

    @Test func everyKindHasABit() {
        #expect(NotificationKind.allCases.allSatisfy { (0..<64).contains($0.ordinal) })
        #expect(Set(NotificationKind.allCases.map(\.ordinal)).count == NotificationKind.allCases.count)
    }

    @Test func isEnabledAgreesWithTheSettingHoweverItWasMade() throws {
        var generator = SeededGenerator(seed: 3)
        var preferences = NotificationPreferences()
        expectAgreement(preferences, "by default")
        for round in 0..<300 {
            let kind = NotificationKind.allCases.randomElement(using: &generator)!
            switch round % 4 {
            case 0: preferences.settings[kind] = NotificationSetting.allCases.randomElement(using: &generator)!
            case 1: preferences.settings[kind] = nil
            case 2:
                preferences.settings = Dictionary(
                    uniqueKeysWithValues: NotificationKind.allCases.shuffled(using: &generator).prefix(5).map {
                        ($0, NotificationSetting.allCases.randomElement(using: &generator)!)
                    })
            default: preferences.enabled.toggle()
            }
            expectAgreement(preferences, "after change \(round)")
            let decoded = try JSONDecoder().decode(
                NotificationPreferences.self, from: try JSONEncoder().encode(preferences))
            expectAgreement(decoded, "decoded after change \(round)")
            #expect(decoded == preferences)
        }
    }
}

/// `NotificationKindSet` answers what a `Set<NotificationKind>` of the same kinds answers.
@Suite struct NotificationKindSetTests {
    @Test func agreesWithASetOfTheSameKinds() {
        var generator = SeededGenerator(seed: 5)
        for _ in 0..<500 {
            let kinds = NotificationKind.allCases.filter { _ in generator.next() % 3 == 0 }
            let bits = NotificationKindSet(kinds)
            let set = Set(kinds)
            for kind in NotificationKind.allCases { #expect(bits.contains(kind) == set.contains(kind)) }
        }
        let empty: NotificationKindSet = []
        #expect(!NotificationKind.allCases.contains { empty.contains($0) })
        let all = NotificationKindSet(NotificationKind.allCases)
        #expect(NotificationKind.allCases.allSatisfy { all.contains($0) })
    }
}
