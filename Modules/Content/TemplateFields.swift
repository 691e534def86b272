import Models

/// A condition a template may require (`"when": ["sunny"]`). A template is eligible only when
/// all its conditions hold for the context.
public enum TemplateCondition: String, CaseIterable, Sendable {
    /// The light re-engagement tone; every reEngagement template names its tone.
    case light
    /// The stronger re-engagement tone.
    case stronger
    /// Slept good or excellent.
    case sleptWell
    /// Slept poor or fair.
    case sleptPoorly
    case sunny, cloudy, rainy, snowy
    /// A workout type is known (planned for today, or the one being reminded of).
    case workoutPlanned
    /// Completion rate at least 80 % (`WeeklyReview.Tier`).
    case completionHigh
    /// Completion rate at least 60 % and under 80 %.
    case completionMid
    /// Completion rate under 60 %.
    case completionLow

    var bit: UInt32 {
        switch self {
        case .light: 1 << 0
        case .stronger: 1 << 1
        case .sleptWell: 1 << 2
        case .sleptPoorly: 1 << 3
        case .sunny: 1 << 4
        case .cloudy: 1 << 5
        case .rainy: 1 << 6
        case .snowy: 1 << 7
        case .workoutPlanned: 1 << 8
        case .completionHigh: 1 << 9
        case .completionMid: 1 << 10
        case .completionLow: 1 << 11
        }
    }

    /// Conditions of one group exclude each other; a template requiring two of a group could
    /// never be chosen.
    var group: Int {
        switch self {
        case .light, .stronger: 0
        case .sleptWell, .sleptPoorly: 1
        case .sunny, .cloudy, .rainy, .snowy: 2
        case .workoutPlanned: 3
        case .completionHigh, .completionMid, .completionLow: 4
        }
    }
}

/// A `{placeholder}` a template may use. Fields with a fallback word (the file's `words`) are
/// always available; the others make a template eligible only when the context has the fact.
/// The first name is neither: it is written in a clause that drops away (`{, name}`), see
/// `Segment.clause`.
enum TemplateField: String, CaseIterable, Sendable {
    case name
    case meal
    case mealCapitalized = "Meal"
    case workout
    case workoutCapitalized = "Workout"
    case daysAway
    case achievement
    case topic
    case streak
    case completed
    case planned
    case percent
    case sender
    case senderText
    case count

    /// The fields that may only be written in a clause that drops away: a name that is unknown,
    /// too long or hidden by the privacy level leaves no trace, never a stand-in word.
    ///
    /// Why a clause rather than a name-free twin of every named template: the one line holds
    /// both readings, so a writer sees them together and they cannot drift apart in one of the
    /// languages; the pools, weights and draws of the template choice stay as they are (the
    /// name is not a fact a template needs); and every name in the catalogue stands at the end of
    /// a clause ("Well done{, name}!") or after a greeting ("Hi{ name} 🌱"), where dropping it
    /// leaves a sentence a person would write. The copy check renders both readings of each.
    static let droppable: [TemplateField] = [.name]

    /// The fact bit a field needs; 0 for fields with a fallback word or in a clause.
    var requirement: UInt32 {
        switch self {
        case .name, .meal, .mealCapitalized, .workout, .workoutCapitalized, .daysAway, .achievement, .topic: 0
        case .streak: FactBits.streak
        case .completed, .planned, .percent: FactBits.completion
        case .sender: FactBits.sender
        case .senderText: FactBits.senderText
        case .count: FactBits.count
        }
    }

    /// The longest value the field renders to, in characters, given the locale's words; a
    /// template must fit the lock screen with every field at its longest.
    func maxLength(_ words: TemplateWords) -> Int {
        switch self {
        case .name: FieldLimits.name
        case .meal, .mealCapitalized: (words.meals + [words.meal]).map(\.count).max() ?? 0
        case .workout, .workoutCapitalized: max(FieldLimits.workout, words.workout.count)
        case .daysAway:
            max(words.daysUnknown.count, words.dayOne.count, words.daysPrefix.count + 4 + words.daysSuffix.count)
        case .achievement: max(FieldLimits.achievement, words.achievement.count)
        case .topic: max(FieldLimits.topic, words.topic.count)
        case .streak: 4
        case .completed, .planned, .percent, .count: 3
        case .sender: FieldLimits.sender
        case .senderText: FieldLimits.senderText
        }
    }
}

/// The longest value of each free-text field; longer values fall back to the locale's word
/// (names, workout types, topics) or are cut with an ellipsis (senders, quotes, achievements).
enum FieldLimits {
    static let name = 30
    static let workout = 32
    static let topic = 30
    static let achievement = 40
    static let sender = 30
    static let senderText = 60
    /// Figures above these are not shown (the template needing them is not eligible).
    static let days = 9_999
    static let streak = 9_999
    static let counts = 999
}

/// Bits of facts a context has, beside the condition bits of `TemplateCondition`.
enum FactBits {
    static let streak: UInt32 = 1 << 16
    static let completion: UInt32 = 1 << 17
    static let sender: UInt32 = 1 << 18
    static let senderText: UInt32 = 1 << 19
    static let count: UInt32 = 1 << 20
    static let tone: UInt32 = TemplateCondition.light.bit | TemplateCondition.stronger.bit

    /// What the (already redacted) context offers.
    static func of(_ context: CopyContext) -> UInt32 {
        var bits: UInt32 = context.stronger ? TemplateCondition.stronger.bit : TemplateCondition.light.bit
        if let sleep = context.sleepQuality {
            bits |= sleep.isRested ? TemplateCondition.sleptWell.bit : TemplateCondition.sleptPoorly.bit
        }
        switch context.weather {
        case .sunny: bits |= TemplateCondition.sunny.bit
        case .cloudy: bits |= TemplateCondition.cloudy.bit
        case .rainy: bits |= TemplateCondition.rainy.bit
        case .snowy: bits |= TemplateCondition.snowy.bit
        case nil: break
        }
        if let type = context.workoutType, type.contains(where: { !$0.isWhitespace }) {
            bits |= TemplateCondition.workoutPlanned.bit
        }
        if let streak = context.streakDays, (2...FieldLimits.streak).contains(streak) {
            bits |= FactBits.streak
        }
        if let rate = context.completionRate, let done = context.workoutsCompleted,
            let planned = context.workoutsPlanned,
            done <= FieldLimits.counts, planned <= FieldLimits.counts
        {
            bits |= FactBits.completion
            bits |=
                rate >= 0.8
                ? TemplateCondition.completionHigh.bit
                : rate >= 0.6 ? TemplateCondition.completionMid.bit : TemplateCondition.completionLow.bit
        }
        if let sender = context.sender, sender.name.contains(where: { !$0.isWhitespace }) {
            bits |= FactBits.sender
            if let text = sender.text, text.contains(where: { !$0.isWhitespace }) { bits |= FactBits.senderText }
        }
        if let count = context.groupCount, (2...FieldLimits.counts).contains(count) { bits |= FactBits.count }
        return bits
    }
}

/// The locale's words for fields without a value, and for meals and day counts. There is no
/// word for the name: a name that may not be shown drops with its clause.
struct TemplateWords: Sendable {
    var meal: String
    var workout: String
    var achievement: String
    var topic: String
    /// Indexed like `MealType.allCases`.
    var meals: [String]
    var mealsCapitalized: [String]
    var dayOne: String
    var daysUnknown: String
    /// "{n} days" split around the number.
    var daysPrefix: String
    var daysSuffix: String
}

extension MealType {
    var index: Int {
        switch self {
        case .breakfast: 0
        case .lunch: 1
        case .snack: 2
        case .dinner: 3
        }
    }
}

extension MotivationalStyle {
    var index: Int {
        switch self {
        case .encouraging: 0
        case .challenging: 1
        case .supportive: 2
        }
    }
}

/// A piece of a pattern: literal text, a placeholder of the pattern's kind of field, or a clause
/// around a placeholder that is shown whole or not at all.
enum Segment<Field: Sendable & Hashable>: Sendable, Hashable {
    case text(String)
    case field(Field)
    /// `{, name}`: `before`, the value and `after` when the value may be shown; nothing otherwise.
    /// `before` and `after` hold only spaces and punctuation, so dropping the clause leaves the
    /// sentence whole: "Good morning{, name} ☀️" reads "Good morning, Ana ☀️" or "Good morning ☀️".
    case clause(before: String, Field, after: String)
}

/// A piece of a template.
typealias TemplateSegment = Segment<TemplateField>

/// The longest a pattern renders to, in characters, with every field at `maxLength`.
func longestLength<Field>(_ segments: [Segment<Field>], maxLength: (Field) -> Int) -> Int {
    var longest = 0
    for segment in segments {
        switch segment {
        case .text(let text): longest += text.count
        case .field(let field): longest += maxLength(field)
        case .clause(let before, let field, let after): longest += before.count + maxLength(field) + after.count
        }
    }
    return longest
}

extension TemplateWords {
    /// The text a field renders to. Call only for fields whose requirement the context meets.
    func value(of field: TemplateField, in context: CopyContext) -> String {
        switch field {
        case .name: return Self.shownName(context) ?? ""
        case .meal: return context.meal.map { meals[$0.index] } ?? meal
        case .mealCapitalized: return context.meal.map { mealsCapitalized[$0.index] } ?? meal.capitalizedFirst
        case .workout: return workoutType(context)?.lowercased() ?? workout
        case .workoutCapitalized: return (workoutType(context) ?? workout).capitalizedFirst
        case .daysAway:
            guard let days = context.daysAway, (1...FieldLimits.days).contains(days) else { return daysUnknown }
            return days == 1 ? dayOne : daysPrefix + String(days) + daysSuffix
        case .achievement:
            return context.achievementName?.trimmedOrNil?.clipped(to: FieldLimits.achievement) ?? achievement
        case .topic:
            guard let topic = context.topic?.trimmedOrNil, topic.count <= FieldLimits.topic else { return self.topic }
            return topic
        case .streak: return String(context.streakDays ?? 0)
        case .completed: return String(context.workoutsCompleted ?? 0)
        case .planned: return String(context.workoutsPlanned ?? 0)
        case .percent: return String(min(FieldLimits.counts, Int(((context.completionRate ?? 0) * 100).rounded())))
        case .sender: return context.sender?.name.trimmedOrNil?.clipped(to: FieldLimits.sender) ?? ""
        case .senderText: return context.sender?.text?.trimmedOrNil?.clipped(to: FieldLimits.senderText) ?? ""
        case .count: return String(context.groupCount ?? 0)
        }
    }

    /// The first name as shown: nil when it is empty, longer than `FieldLimits.name`, or removed
    /// by the privacy level (`PrivacyPolicy.redact` empties it), so its clause drops.
    static func shownName(_ context: CopyContext) -> String? {
        guard let name = context.firstName.trimmedOrNil, name.count <= FieldLimits.name else { return nil }
        return name
    }

    /// The text of a clause: whole when its field has a value to show, empty otherwise.
    func clauseText(_ before: String, _ field: TemplateField, _ after: String, _ context: CopyContext) -> String {
        switch field {
        case .name: Self.shownName(context).map { before + $0 + after } ?? ""
        default: before + value(of: field, in: context) + after
        }
    }

    private func workoutType(_ context: CopyContext) -> String? {
        guard let type = context.workoutType?.trimmedOrNil, type.count <= FieldLimits.workout else { return nil }
        return type
    }

    /// The segments' text with each field's value, made a string once and of exactly its length:
    /// rendered copy lives as long as its request (a device holds up to 64), and a string grown
    /// from a reserve kept about twice its bytes. Written through a buffer on the stack; copy
    /// longer than the buffer (none of the catalogue's) is joined piece by piece instead.
    func render(_ segments: [TemplateSegment], _ context: CopyContext) -> String {
        if segments.count == 1, case .text(let text) = segments[0] { return text }
        let written = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 512) { buffer -> String? in
            var count = 0
            for segment in segments {
                let fits = text(of: segment, context).withUTF8Bytes { bytes in
                    guard bytes.count <= buffer.count - count else { return false }
                    _ = UnsafeMutableBufferPointer(rebasing: buffer[count...]).initialize(fromContentsOf: bytes)
                    count += bytes.count
                    return true
                }
                guard fits else { return nil }
            }
            return String(decoding: UnsafeBufferPointer(rebasing: buffer[..<count]), as: UTF8.self)
        }
        return written ?? segments.map { text(of: $0, context) }.joined()
    }

    private func text(of segment: TemplateSegment, _ context: CopyContext) -> String {
        switch segment {
        case .text(let text): text
        case .field(let field): value(of: field, in: context)
        case .clause(let before, let field, let after): clauseText(before, field, after, context)
        }
    }
}
