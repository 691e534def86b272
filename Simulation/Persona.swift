public import Models

/// A kind of synthetic user, with the habits that drive their behaviour.
public enum Persona: String, CaseIterable, Sendable, Codable {
    case morningRunner, eveningLifter, irregular, lapsing, churner, giveMeSpace, nightShift, traveller

    /// Behaviour parameters of the persona, built once: the world reads them on every delivery
    /// and every day it plans, and building them made a set of weekdays each time.
    public var habits: Habits {
        switch self {
        case .morningRunner: Persona.habitsOfEach[0]
        case .eveningLifter: Persona.habitsOfEach[1]
        case .irregular: Persona.habitsOfEach[2]
        case .lapsing: Persona.habitsOfEach[3]
        case .churner: Persona.habitsOfEach[4]
        case .giveMeSpace: Persona.habitsOfEach[5]
        case .nightShift: Persona.habitsOfEach[6]
        case .traveller: Persona.habitsOfEach[7]
        }
    }

    /// `definedHabits` of each persona, in `allCases` order (the declaration order, which the
    /// indices in `habits` follow; a test holds each persona's kept habits equal to its own).
    private static let habitsOfEach = allCases.map(\.definedHabits)

    /// The habits as the personas define them; read through `habits` (internal for the test).
    var definedHabits: Habits {
        switch self {
        case .morningRunner:
            Habits(
                wake: 6 * 60, sleep: 22 * 60, opensPerDay: 3, workoutDays: [.monday, .wednesday, .friday, .saturday],
                workoutMinute: 6 * 60 + 30, adherence: 0.85, mealLogging: 0.7, actRate: 0.45, lapsePerDay: 0.005)
        case .eveningLifter:
            Habits(
                wake: 7 * 60, sleep: 23 * 60, opensPerDay: 2.5, workoutDays: [.tuesday, .thursday, .sunday],
                workoutMinute: 18 * 60 + 30, adherence: 0.8, mealLogging: 0.5, actRate: 0.35, lapsePerDay: 0.008)
        case .irregular:
            Habits(
                wake: 8 * 60, sleep: 24 * 60 - 30, opensPerDay: 1.5, workoutDays: [.monday, .thursday],
                workoutMinute: 12 * 60, adherence: 0.4, mealLogging: 0.3, actRate: 0.2, lapsePerDay: 0.02)
        case .lapsing:
            Habits(
                wake: 7 * 60, sleep: 23 * 60, opensPerDay: 2, workoutDays: [.tuesday, .saturday],
                workoutMinute: 17 * 60, adherence: 0.6, mealLogging: 0.4, actRate: 0.25, lapsePerDay: 0.06)
        case .churner:
            Habits(
                wake: 7 * 60, sleep: 23 * 60, opensPerDay: 1.5, workoutDays: [.wednesday],
                workoutMinute: 19 * 60, adherence: 0.5, mealLogging: 0.2, actRate: 0.1, lapsePerDay: 0.1,
                returnRate: 0.3)
        case .giveMeSpace:
            Habits(
                wake: 7 * 60, sleep: 23 * 60, opensPerDay: 1.5, workoutDays: [.monday, .friday],
                workoutMinute: 7 * 60, adherence: 0.6, mealLogging: 0.3, actRate: 0.2, lapsePerDay: 0.05)
        case .nightShift:
            Habits(
                wake: 16 * 60, sleep: 8 * 60, opensPerDay: 2, workoutDays: [.monday, .wednesday, .saturday],
                workoutMinute: 20 * 60, adherence: 0.7, mealLogging: 0.4, actRate: 0.3, lapsePerDay: 0.01)
        case .traveller:
            Habits(
                wake: 7 * 60, sleep: 23 * 60, opensPerDay: 2.5, workoutDays: [.monday, .thursday, .saturday],
                workoutMinute: 7 * 60, adherence: 0.6, mealLogging: 0.5, actRate: 0.3, lapsePerDay: 0.01)
        }
    }

    /// Sleep-friendly quiet hours a persona would choose if they set any.
    public var prefersShiftedQuietHours: Bool { self == .nightShift }
}

/// What a persona does on an ordinary day, in its local time.
public struct Habits: Hashable, Sendable {
    /// Wake and sleep, minutes after local midnight; sleep may be before wake (night shift).
    public var wake: Int
    public var sleep: Int
    public var opensPerDay: Double
    public var workoutDays: Set<Weekday>
    public var workoutMinute: Int
    /// Probability a planned workout happens.
    public var adherence: Double
    /// Probability a meal is logged.
    public var mealLogging: Double
    /// Probability of acting on a relevant notification while awake.
    public var actRate: Double
    /// Probability per day of starting a lapse.
    public var lapsePerDay: Double
    /// Probability that a lapse ends with a return (else the user churns for good).
    public var returnRate: Double = 0.9
    /// Reactions of other users (kudos) per day; comments come at a quarter of that rate.
    public var socialPerDay: Double = 1.5

    public func isAwake(minuteOfDay minute: Int) -> Bool {
        wake < sleep ? minute >= wake && minute < sleep : minute >= wake || minute < sleep
    }
}
