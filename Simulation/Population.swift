public import Models

/// One synthetic user's fixed traits, drawn from the scenario's distributions.
public struct SimulatedUserTraits: Sendable {
    public var index: Int
    public var persona: Persona
    public var profile: UserProfile
    /// The zones a traveller moves between (the scenario's zones).
    public var isTraveller: Bool { persona == .traveller }
}

/// Draws the population deterministically: user `i` depends only on the seed and `i`, so the
/// population is the same whatever the number of threads.
public enum Population {
    public static func userID(_ index: Int) -> UserID {
        let digits = String(index)
        return UserID("u" + String(repeating: "0", count: max(0, 6 - digits.count)) + digits)
    }

    public static func traits(index: Int, scenario: Scenario) -> SimulatedUserTraits {
        var generator = SeededGenerator(seed: scenario.seed).derived(0x5EED_0000 &+ UInt64(index))
        let persona = Persona(rawValue: scenario.personas.pick(&generator))!
        let zone = scenario.timeZones.pick(&generator)
        var preferences = NotificationPreferences()
        let habits = persona.habits
        if persona.prefersShiftedQuietHours {
            preferences.quietHours = try? QuietHours(
                start: LocalTimeOfDay(minutesSinceMidnight: habits.sleep),
                end: LocalTimeOfDay(minutesSinceMidnight: habits.wake))
            preferences.wakeTime = LocalTimeOfDay(minutesSinceMidnight: 17 * 60)
            preferences.sleepTime = LocalTimeOfDay(minutesSinceMidnight: 23 * 60 + 30)
            preferences.morningTime = LocalTimeOfDay(minutesSinceMidnight: 16 * 60 + 30)
        } else {
            preferences.quietHours = QuietHours.parseRange(scenario.quietHours.pick(&generator)).value
        }
        let hydration = scenario.hydration.pick(&generator)
        preferences.hydration = HydrationFrequency(rawValue: hydration)
        preferences.maxPerHour = Int(scenario.maxPerHour.pick(&generator)) ?? 10
        preferences.maxPerDay = Int(scenario.maxPerDay.pick(&generator))
        if let disabled = NotificationKind(rawValue: scenario.disabledKinds.pick(&generator)) {
            preferences.settings[disabled] = .disabled
        }
        preferences.settings[.workoutKudos] = NotificationSetting(rawValue: scenario.kudosSetting.pick(&generator))
        preferences.workoutSchedule = habits.workoutDays.sorted().map {
            ScheduledWorkout(
                weekday: $0, time: LocalTimeOfDay(minutesSinceMidnight: habits.workoutMinute), type: "Workout")
        }
        let absence =
            persona == .giveMeSpace
            ? AbsenceResponse.giveMeSpace : AbsenceResponse(rawValue: scenario.absenceResponse.pick(&generator))!
        let preferredTimes = persona == .nightShift ? [LocalTimeOfDay(minutesSinceMidnight: 18 * 60)] : []
        let profile = UserProfile(
            id: userID(index), displayName: firstNames[index % firstNames.count] + " Example", timeZone: zone,
            motivationalStyle: MotivationalStyle(rawValue: scenario.motivationalStyle.pick(&generator))!,
            communication: CommunicationPreferences(absenceResponse: absence, preferredTimes: preferredTimes),
            privacyLevel: PrivacyLevel(rawValue: scenario.privacyLevel.pick(&generator))!, preferences: preferences,
            locale: locale(index: index, scenario: scenario))
        return SimulatedUserTraits(index: index, persona: persona, profile: profile)
    }

    static let firstNames = [
        "Ana", "Ben", "Chen", "Dara", "Emeka", "Fatima", "Gus", "Hana", "Ivo", "Jun", "Kiri", "Lea",
    ]
}
