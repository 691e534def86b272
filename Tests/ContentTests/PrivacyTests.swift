import Models
import Testing

@testable import Content

@Suite("Privacy: what each level shows")
struct PrivacyLevelTests {
    let generator: ContentGenerator

    init() throws { generator = try bundledGenerator() }

    func templateCopy(_ kind: NotificationKind, _ level: PrivacyLevel, sender: SocialSender?, seed: UInt64) -> Copy {
        var memory = TemplateMemory()
        var rng = SeededGenerator(seed: seed)
        return generator.decide(
            nil, for: request(kind, level: level, context: richContext(kind, sender: sender)), memory: &memory,
            generator: &rng
        ).copy
    }

    func everything(_ copy: Copy) -> String { "\(copy.title) \(copy.body)" }

    @Test func publicShowsTheSenderToEveryone() {
        let shown = (0..<40).map { everything(templateCopy(.workoutKudos, .public, sender: stranger, seed: $0)) }
        #expect(shown.contains { $0.contains("Carla Diaz") })
    }

    @Test func friendsOnlyShowsTheSenderToMutualFriendsOnly() {
        let friend = (0..<40).map {
            everything(templateCopy(.workoutKudos, .friendsOnly, sender: mutualFriend, seed: $0))
        }
        #expect(friend.contains { $0.contains("Ben Okafor") })
        let other = (0..<40).map { everything(templateCopy(.workoutComment, .friendsOnly, sender: stranger, seed: $0)) }
        #expect(!other.contains { $0.contains("Carla") || $0.contains("Which shoes") })
    }

    @Test(arguments: NotificationKind.allCases)
    func privateShowsGenericTextOnly(kind: NotificationKind) {
        for seed in 0..<30 as Range<UInt64> {
            let text = everything(templateCopy(kind, .private, sender: mutualFriend, seed: seed))
            for secret in ["Ana", "Ben", "Okafor", "Great pace", "12", "4 of 5", "80", "First 5K", "9 days"] {
                #expect(!text.contains(secret), "\(kind): \"\(text)\" shows \"\(secret)\"")
            }
        }
    }

    @Test func theRedactionTable() {
        let full = richContext(.workoutComment, sender: stranger)
        #expect(PrivacyPolicy(.public).redact(full) == full)
        let friends = PrivacyPolicy(.friendsOnly).redact(full)
        #expect(friends.sender == nil && friends.firstName == "Ana" && friends.streakDays == 12)
        var withFriend = full
        withFriend.sender = mutualFriend
        #expect(PrivacyPolicy(.friendsOnly).redact(withFriend).sender == mutualFriend)
        let closed = PrivacyPolicy(.private).redact(withFriend)
        #expect(closed.firstName.isEmpty && closed.sender == nil && closed.streakDays == nil)
        #expect(closed.sleepQuality == nil && closed.workoutsCompleted == nil && closed.achievementName == nil)
        #expect(closed.meal == .lunch && closed.weather == .sunny && closed.workoutType == "Run")
    }

    /// The property the simulator's invariant relies on: template copy rendered for a level never
    /// fails the audit for that level, whatever the engine knew.
    @Test(arguments: PrivacyLevel.allCases, NotificationKind.allCases)
    func templateCopyAlwaysPassesTheAudit(level: PrivacyLevel, kind: NotificationKind) {
        for sender in [mutualFriend, stranger] {
            for seed in 0..<12 as Range<UInt64> {
                let copy = templateCopy(kind, level, sender: sender, seed: seed)
                let content = NotificationContent(kind: kind, title: copy.title, body: copy.body)
                let found = PrivacyAudit.violations(in: content, for: recipient(level), senders: [sender])
                #expect(found.isEmpty, "\(found)")
            }
        }
    }
}

@Suite("Privacy: the audit")
struct PrivacyAuditTests {
    func audit(_ body: String, _ level: PrivacyLevel = .public, senders: [SocialSender] = []) -> [PersonalDataKind] {
        PrivacyAudit.violations(inText: body, field: "body", for: recipient(level), senders: senders).map(\.kind)
    }

    static let clean: [String] = [
        "Set the tone: one strong choice before 9.",
        "Lunch at 12:30 keeps the afternoon steady.",
        "3 people cheered your morning run.",
        "Ten minutes is enough today.",
        "Email your coach from the app.",
        "Meet @ the park?",
        "Your plan for 2027 is ready.",
    ]

    @Test(arguments: clean, PrivacyLevel.allCases)
    func ordinaryCopyPasses(text: String, level: PrivacyLevel) {
        #expect(audit(text, level).isEmpty)
    }

    static let leaks: [(String, PrivacyLevel, PersonalDataKind)] = [
        ("Write to ana.lima@example.com", .public, .email),
        ("Write to ANA.LIMA@EXAMPLE.COM", .public, .email),
        ("Call +44 20 7946 0958", .public, .phoneNumber),
        ("Call (415) 555-0199", .public, .phoneNumber),
        ("Well done, Ana Lima", .public, .fullName),
        ("Well done, Ana", .private, .firstName),
        ("You weigh 82.5 kg", .private, .healthFigure),
        ("You weigh 180lbs", .private, .healthFigure),
        ("Heart rate: 58", .private, .healthFigure),
        ("142 bpm peak", .private, .healthFigure),
        ("10000 steps today", .private, .healthFigure),
        ("Serie von 12 Tagen", .private, .healthFigure),
        ("A 5-Tage-Serie", .private, .healthFigure),
        ("80 % geschafft", .private, .healthFigure),
    ]

    @Test(arguments: leaks)
    func leaksAreReported(text: String, level: PrivacyLevel, kind: PersonalDataKind) {
        #expect(audit(text, level).contains(kind), "\(audit(text, level))")
    }

    @Test func aFirstNameInsideAnotherWordIsNotTheName() {
        #expect(audit("Banana smoothie time", .private).isEmpty)
        #expect(audit("Anastasia says hi", .private).isEmpty)
    }

    @Test func othersNamesAndWordsDependOnTheRelationship() {
        #expect(audit("Carla cheered your run", .friendsOnly, senders: [stranger]) == [.senderName])
        #expect(audit("Carla cheered your run", .public, senders: [stranger]).isEmpty)
        #expect(audit("Ben cheered your run", .friendsOnly, senders: [mutualFriend]).isEmpty)
        #expect(audit("Ben cheered your run", .private, senders: [mutualFriend]) == [.senderName])
        #expect(audit("“Which shoes do you run in?”", .friendsOnly, senders: [stranger]) == [.othersText])
    }

    @Test func theAuditReadsTitleSubtitleAndBody() {
        let content = NotificationContent(
            kind: .mention, title: "Ana Lima 📣", subtitle: "ana.lima@example.com", body: "You weigh 82 kg")
        let found = PrivacyAudit.violations(in: content, for: recipient(.private))
        #expect(found.map(\.field) == ["title", "title", "subtitle", "body"])
        #expect(found.map(\.kind) == [.fullName, .firstName, .email, .healthFigure])
    }
}

/// The audit's quick test for a space or an `@` in the recipient's details says what
/// `contains(Character)` says, on ASCII and other text, combining marks included.
@Suite struct PrivacyCharacterTests {
    @Test func hasCharacterAgreesWithCharacterContains() {
        var generator = SeededGenerator(seed: 9)
        let pieces = ["a", "Z", " ", "@", "é", "e\u{301}", " \u{301}", "@\u{301}", "💧", "\r\n", "\t", "-", "Ana", "ß"]
        for _ in 0..<3_000 {
            let text = (0..<Int(generator.next() % 8)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            for character: Character in [" ", "@"] {
                let byte = character.asciiValue!
                #expect(TextScan.hasCharacter(byte, in: text) == text.contains(character), "\(text.debugDescription)")
            }
        }
        #expect(TextScan.hasCharacter(UInt8(ascii: " "), in: "Ana Lima"))
        #expect(!TextScan.hasCharacter(UInt8(ascii: " "), in: "Ana \u{301}Lima"))
        #expect(!TextScan.hasCharacter(UInt8(ascii: " "), in: ""))
    }

    /// The lock-screen lengths count characters as `String.count` does: CR LF is one, and so is a
    /// letter with its combining mark or an emoji sequence.
    @Test func characterCountAgreesWithStringCount() {
        var generator = SeededGenerator(seed: 11)
        let pieces = ["a", " ", "\r", "\n", "\r\n", "é", "e\u{301}", "💧", "👩‍👩‍👧", "\t", "Ana", "ß", "\u{0}"]
        for _ in 0..<3_000 {
            let text = (0..<Int(generator.next() % 10)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            #expect(TextScan.characterCount(text) == text.count, "\(text.debugDescription)")
        }
        #expect(TextScan.characterCount("") == 0)
        #expect(TextScan.characterCount("\r\n\r\n") == 2)
        #expect(TextScan.characterCount("\n\r") == 2)
        #expect(TextScan.characterCount(String(repeating: "x", count: 5_000)) == 5_000)
    }
}
