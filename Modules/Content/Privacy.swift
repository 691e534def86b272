public import Models

/// The person a notification is for, with the personal data that must not leak into it.
public struct Recipient: Hashable, Sendable {
    public var privacyLevel: PrivacyLevel
    public var firstName: String
    /// The display name as entered, usually first and last name.
    public var fullName: String
    public var email: String?
    public var phoneNumber: String?

    public init(
        privacyLevel: PrivacyLevel, firstName: String, fullName: String, email: String? = nil,
        phoneNumber: String? = nil
    ) {
        self.privacyLevel = privacyLevel
        self.firstName = firstName
        self.fullName = fullName
        self.email = email
        self.phoneNumber = phoneNumber
    }

    public init(_ profile: UserProfile, email: String? = nil, phoneNumber: String? = nil) {
        self.init(
            privacyLevel: profile.privacyLevel, firstName: profile.firstName, fullName: profile.displayName,
            email: email, phoneNumber: phoneNumber)
    }
}

/// What a privacy level lets a notification show on the lock screen, for template copy and the
/// coach's copy alike.
///
/// | shown                                   | public | friendsOnly        | private |
/// |-----------------------------------------|--------|--------------------|---------|
/// | email, phone number, the user's full name | never | never            | never   |
/// | the user's first name                    | yes    | yes                | no      |
/// | health and activity figures (streak, completion, days away, sleep, weight, heart rate) | yes | yes | no |
/// | another user's name and what they wrote  | yes    | mutual friends only | no     |
///
/// So private users get kind-specific but generic copy ("Time for lunch 🍽️", "New comment 💬"),
/// never who or how much. Weather, meal and workout type are not treated as personal.
public struct PrivacyPolicy: Hashable, Sendable {
    public var level: PrivacyLevel

    public init(_ level: PrivacyLevel) { self.level = level }

    public var showsFirstName: Bool { level != .private }
    public var showsHealthFigures: Bool { level != .private }

    /// Whether another user's name and words may be shown.
    public func showsSender(_ sender: SocialSender) -> Bool {
        switch level {
        case .public: true
        case .friendsOnly: sender.isMutualFriend
        case .private: false
        }
    }

    /// The context without what the level does not allow; templates needing a removed fact
    /// become ineligible and generic ones are chosen instead.
    public func redact(_ context: CopyContext) -> CopyContext {
        var redacted = context
        if !showsFirstName { redacted.firstName = "" }
        if !showsHealthFigures {
            redacted.streakDays = nil
            redacted.daysAway = nil
            redacted.sleepQuality = nil
            redacted.workoutsCompleted = nil
            redacted.workoutsPlanned = nil
            // Achievement names can carry figures ("Lost 5 kg").
            redacted.achievementName = nil
        }
        if let sender = context.sender, !showsSender(sender) { redacted.sender = nil }
        return redacted
    }
}

/// Kinds of personal data a notification must not carry beyond what the level allows.
public enum PersonalDataKind: String, Codable, CaseIterable, Sendable {
    case email
    case phoneNumber
    /// The recipient's full name (never needed: copy uses the first name).
    case fullName
    /// The recipient's first name, for private users.
    case firstName
    /// Another user's name where the level does not allow it.
    case senderName
    /// Free text another user wrote, where the level does not allow it.
    case othersText
    /// A health or activity figure (weight, heart rate, streak, completion) for private users.
    case healthFigure
}

/// One piece of personal data found in a notification.
public struct PrivacyViolation: Hashable, Sendable, CustomStringConvertible {
    public var kind: PersonalDataKind
    /// "title", "subtitle" or "body".
    public var field: String
    /// The offending text (simulated users only; never log it for real ones).
    public var match: String

    public var description: String { "\(kind.rawValue) in \(field): \"\(match)\"" }
}

/// Checks delivered content for personal data the recipient's privacy level does not allow.
/// The simulator calls it on every payload it delivers; `ContentGenerator` applies the same
/// scan to the coach's output before showing it.
///
/// A heuristic, not a proof: it finds email addresses and phone numbers by shape, names and
/// quotes by exact spelling (whole words, case-sensitive), and figures as a number next to a
/// health unit (kg, lb, bpm, kcal, steps, %, days, ...) or after a health word (weight,
/// heart rate, pulse, BMI). It errs on the side of reporting.
public enum PrivacyAudit {
    /// Violations in the title, subtitle and body of `content`.
    public static func violations(
        in content: NotificationContent, for recipient: Recipient, senders: [SocialSender] = []
    ) -> [PrivacyViolation] {
        var found = violations(inText: content.title, field: "title", for: recipient, senders: senders)
        if let subtitle = content.subtitle {
            found += violations(inText: subtitle, field: "subtitle", for: recipient, senders: senders)
        }
        found += violations(inText: content.body, field: "body", for: recipient, senders: senders)
        return found
    }

    /// Violations in one piece of text.
    public static func violations(
        inText text: String, field: String, for recipient: Recipient, senders: [SocialSender] = []
    ) -> [PrivacyViolation] {
        // The text's bytes are read in place: the audit runs on every payload the simulator delivers.
        text.withUTF8Bytes { violations(inBytes: $0, field: field, for: recipient, senders: senders) }
    }

    private static func violations(
        inBytes bytes: UnsafeBufferPointer<UInt8>, field: String, for recipient: Recipient, senders: [SocialSender]
    ) -> [PrivacyViolation] {
        var found: [PrivacyViolation] = []
        let policy = PrivacyPolicy(recipient.privacyLevel)
        func report(_ kind: PersonalDataKind, _ match: String) {
            guard !found.contains(where: { $0.kind == kind }) else { return }
            found.append(PrivacyViolation(kind: kind, field: field, match: match))
        }
        if let email = TextScan.email(in: bytes) { report(.email, email) }
        func findKnown(_ field: String?) {
            guard let known = field?.trimmedOrNil, TextScan.characterCount(known) >= 5 else { return }
            if TextScan.find(known.utf8, in: bytes, wholeWord: false) {
                report(TextScan.hasCharacter(UInt8(ascii: "@"), in: known) ? .email : .phoneNumber, known)
            }
        }
        findKnown(recipient.email)
        findKnown(recipient.phoneNumber)
        if let phone = TextScan.phoneNumber(in: bytes) { report(.phoneNumber, phone) }
        if let full = recipient.fullName.trimmedOrNil, TextScan.hasCharacter(UInt8(ascii: " "), in: full),
            TextScan.find(full.utf8, in: bytes, wholeWord: true)
        {
            report(.fullName, full)
        }
        if !policy.showsFirstName, let first = recipient.firstName.trimmedOrNil,
            TextScan.characterCount(first) >= 2,
            TextScan.find(first.utf8, in: bytes, wholeWord: true)
        {
            report(.firstName, first)
        }
        for sender in senders where !policy.showsSender(sender) {
            if let name = sender.name.trimmedOrNil, TextScan.characterCount(name) >= 2 {
                // The whole name, and each part of it ("Ana" of "Ana Lima").
                let parts =
                    [name]
                    + name.split(separator: " ").map(String.init).filter {
                        TextScan.characterCount($0) >= 2 && $0 != name
                    }
                if let hit = parts.first(where: { TextScan.find($0.utf8, in: bytes, wholeWord: true) }) {
                    report(.senderName, hit)
                }
            }
            if let words = sender.text?.trimmedOrNil {
                let probe = String(words.prefix(24)).trimmedOrNil ?? words
                if TextScan.characterCount(probe) >= 8, TextScan.find(probe.utf8, in: bytes, wholeWord: false) {
                    report(.othersText, probe)
                }
            }
        }
        if !policy.showsHealthFigures, let figure = TextScan.healthFigure(in: bytes) {
            report(.healthFigure, figure)
        }
        return found
    }
}

/// Byte-level scanners over UTF-8: the audit runs on every simulated delivery, so no regular
/// expressions and no allocation unless something is found.
enum TextScan {
    static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
    static func isASCIILetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A }
    /// Letters, digits and any non-ASCII byte (accented letters) make up words.
    static func isWordByte(_ byte: UInt8) -> Bool { byte >= 0x80 || isDigit(byte) || isASCIILetter(byte) }

    /// Whether `text` has the ASCII character `byte` as a character of its own, as
    /// `text.contains(Character(byte))` says (a space followed by a combining mark is not a
    /// space). In text that is all ASCII no byte joins another into one character (only CR LF,
    /// neither of them asked for here), so the byte answers; other text is asked character by
    /// character. The audit asks this of the recipient's names for every text it checks.
    static func hasCharacter(_ byte: UInt8, in text: String) -> Bool {
        assert(byte < 0x80 && byte != 0x0A && byte != 0x0D, "an ASCII character other than CR and LF")
        let asciiAnswer = text.withUTF8Bytes { units -> Bool? in
            var found = false
            for unit in units {
                if unit >= 0x80 { return nil }
                if unit == byte { found = true }
            }
            return found
        }
        return asciiAnswer ?? text.contains(Character(Unicode.Scalar(byte)))
    }

    /// `text.count`, the characters a person sees. In text that is all ASCII each byte is one
    /// character but CR LF, which is one; other text is counted character by character.
    static func characterCount(_ text: String) -> Int {
        let asciiCount = text.withUTF8Bytes { bytes -> Int? in
            var count = 0
            var previous: UInt8 = 0
            for unit in bytes {
                if unit >= 0x80 { return nil }
                if !(unit == 0x0A && previous == 0x0D) { count += 1 }
                previous = unit
            }
            return count
        }
        return asciiCount ?? text.count
    }

    static func text(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    /// Whether `needle` occurs in `haystack`; with `wholeWord`, not inside a longer word. The
    /// needle may be a string's UTF-8 view: no copy of it is made.
    static func find(_ needle: some Collection<UInt8>, in haystack: UnsafeBufferPointer<UInt8>, wholeWord: Bool) -> Bool
    {
        let length = needle.count
        guard let first = needle.first, length <= haystack.count else { return false }
        var start = 0
        while start + length <= haystack.count {
            if haystack[start] == first, haystack[start..<(start + length)].elementsEqual(needle) {
                if !wholeWord { return true }
                let end = start + length
                let before = start == 0 || !isWordByte(haystack[start - 1])
                let after = end == haystack.count || !isWordByte(haystack[end])
                if before && after { return true }
            }
            start += 1
        }
        return false
    }

    /// The first thing shaped like an email address: word characters, "@", a dotted domain.
    static func email(in bytes: UnsafeBufferPointer<UInt8>) -> String? {
        func local(_ byte: UInt8) -> Bool {
            isWordByte(byte) || byte == 0x2E || byte == 0x5F || byte == 0x2D || byte == 0x2B  // . _ - +
        }
        func domain(_ byte: UInt8) -> Bool { isWordByte(byte) || byte == 0x2E || byte == 0x2D }
        var index = 0
        while let at = bytes[index...].firstIndex(of: 0x40) {  // "@"
            var start = at
            while start > 0, local(bytes[start - 1]) { start -= 1 }
            var end = at + 1
            var dots = 0
            while end < bytes.count, domain(bytes[end]) {
                if bytes[end] == 0x2E { dots += 1 }
                end += 1
            }
            while end > at + 1, bytes[end - 1] == 0x2E {
                end -= 1
                dots -= 1
            }
            if start < at, dots >= 1, end - at > 3 { return text(bytes, start..<end) }
            index = at + 1
        }
        return nil
    }

    /// Space, dash, dot, brackets and slash: what may join a phone number's digits.
    static func isPhoneSeparator(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x20, 0x2D, 0x2E, 0x28, 0x29, 0x2F: true
        default: false
        }
    }

    /// The first run of at least 7 digits joined only by spaces, dashes, dots, slashes or
    /// brackets, optionally after "+": a phone number (years and times are shorter).
    static func phoneNumber(in bytes: UnsafeBufferPointer<UInt8>) -> String? {
        var index = 0
        while index < bytes.count {
            guard
                isDigit(bytes[index]) || (bytes[index] == 0x2B && index + 1 < bytes.count && isDigit(bytes[index + 1]))
            else {
                index += 1
                continue
            }
            let start = index
            var digits = 0
            var end = index
            var cursor = index
            while cursor < bytes.count {
                let byte = bytes[cursor]
                if isDigit(byte) {
                    digits += 1
                    end = cursor + 1
                } else if !(byte == 0x2B && cursor == start) && !isPhoneSeparator(byte) {
                    break
                }
                cursor += 1
            }
            if digits >= 7 && (start == 0 || !isASCIILetter(bytes[start - 1])) { return text(bytes, start..<end) }
            index = max(cursor, index + 1)
        }
        return nil
    }

    /// Units and words that make a number a health or activity figure (English and German).
    static let units: Set<String> = [
        "kg", "kgs", "kilo", "kilos", "lb", "lbs", "pound", "pounds", "bpm", "kcal", "cal", "calorie", "calories",
        "kalorien", "step", "steps", "schritte", "km", "mi", "mile", "miles", "day", "days", "tag", "tage", "tagen",
        "mmhg", "bmi",
    ]
    static let healthWords: Set<String> = [
        "weight", "weigh", "weighs", "weighed", "rate", "pulse", "bmi", "hr", "gewicht", "puls", "herzfrequenz",
        "blood", "pressure", "blutdruck",
    ]

    /// The first number next to a health unit ("82 kg", "7-day", "80%") or after a health word
    /// ("heart rate 72", "weight: 80").
    static func healthFigure(in bytes: UnsafeBufferPointer<UInt8>) -> String? {
        var index = 0
        while index < bytes.count {
            guard isDigit(bytes[index]) else {
                index += 1
                continue
            }
            let start = index
            while index < bytes.count, isDigit(bytes[index]) || bytes[index] == 0x2E || bytes[index] == 0x2C {
                index += 1
            }
            var numberEnd = index
            while numberEnd > start, !isDigit(bytes[numberEnd - 1]) { numberEnd -= 1 }
            // The word after: skip spaces and one hyphen ("7-day", "5-Tage-Serie").
            var cursor = numberEnd
            while cursor < bytes.count, bytes[cursor] == 0x20 || bytes[cursor] == 0x2D { cursor += 1 }
            if cursor < bytes.count, bytes[cursor] == 0x25 { return text(bytes, start..<(cursor + 1)) }  // "%"
            var wordEnd = cursor
            while wordEnd < bytes.count, isASCIILetter(bytes[wordEnd]) { wordEnd += 1 }
            if wordEnd > cursor, units.contains(text(bytes, cursor..<wordEnd).lowercased()) {
                return text(bytes, start..<wordEnd)
            }
            // The word before: skip spaces and a colon.
            var before = start
            while before > 0, bytes[before - 1] == 0x20 || bytes[before - 1] == 0x3A { before -= 1 }
            var wordStart = before
            while wordStart > 0, isASCIILetter(bytes[wordStart - 1]) { wordStart -= 1 }
            if wordStart < before, healthWords.contains(text(bytes, wordStart..<before).lowercased()) {
                return text(bytes, wordStart..<numberEnd)
            }
            index = max(index, start + 1)
        }
        return nil
    }
}
