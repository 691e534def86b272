import Models
import Testing

@testable import Content

@Suite("Coach output: parsing title|body")
struct CoachOutputParsingTests {
    static let accepted: [(String, String, String)] = [
        ("Hey there|We miss you", "Hey there", "We miss you"),
        ("  Hey there |  We miss you  ", "Hey there", "We miss you"),
        ("Hey\nthere|We\n\nmiss\tyou", "Hey there", "We miss you"),
        ("\"Hey there|We miss you\"", "Hey there", "We miss you"),
        ("“Hey there|We miss you”", "Hey there", "We miss you"),
        ("Hey there|We miss you|", "Hey there", "We miss you"),
        ("|Hey there|We miss you", "Hey there", "We miss you"),
        ("Hey there|We miss you| |", "Hey there", "We miss you"),
        ("Good morning ☀️|Ready, Zoë?", "Good morning ☀️", "Ready, Zoë?"),
    ]

    @Test(arguments: accepted)
    func wellFormedAnswersParse(text: String, title: String, body: String) throws {
        let copy = try CoachOutput.parse(text).get()
        #expect(copy == Copy(title: title, body: body))
    }

    static let rejected: [(String, OutputProblem)] = [
        ("", .empty),
        ("   \n\t ", .empty),
        ("\"\"", .empty),
        ("We miss you at AirFit!", .missingSeparator),
        ("Hey|there|We miss you", .extraSeparators),
        ("Hey||We miss you", .extraSeparators),
        ("|We miss you", .emptyTitle),
        ("   |We miss you", .emptyTitle),
        ("Hey there|", .emptyBody),
        ("Hey there|   ", .emptyBody),
        ("|", .emptyTitle),
    ]

    @Test(arguments: rejected)
    func malformedAnswersAreRejectedWithTheirReason(text: String, problem: OutputProblem) {
        #expect(throws: problem) { try CoachOutput.parse(text).get() }
    }
}

@Suite("Coach output: validation")
struct CoachOutputValidationTests {
    let envelope = NotificationContent(kind: .morningGreeting, title: "", body: "")

    func validate(_ text: String, _ level: PrivacyLevel = .friendsOnly, senders: [SocialSender] = []) -> Result<
        Copy, OutputProblem
    > {
        CoachOutput.validate(text, recipient: recipient(level), senders: senders, envelope: envelope)
    }

    @Test func aGoodAnswerPasses() throws {
        #expect(try validate("Good morning, Ana ☀️|Ready for your run?").get().title == "Good morning, Ana ☀️")
    }

    @Test func lengthsAreCheckedInCharactersAtTheLockScreenLimits() {
        let title60 = String(repeating: "é", count: 59) + "🏃"
        #expect((try? validate("\(title60)|ok body").get()) != nil)
        #expect(throws: OutputProblem.titleTooLong(characters: 61, limit: 60)) {
            try validate("\(title60)x|ok body").get()
        }
        let body178 = String(repeating: "a", count: 178)
        #expect((try? validate("Title|\(body178)").get()) != nil)
        #expect(throws: OutputProblem.bodyTooLong(characters: 179, limit: 178)) {
            try validate("Title|\(body178)b").get()
        }
    }

    static let leftovers: [(String, String)] = [
        ("Hi {name}|Ready?", "{"),
        ("Hi there|Your } plan", "}"),
        ("Hi there|TODO write this", "todo"),
        ("Hi there|Lorem ipsum dolor", "lorem"),
        ("null|null", "null"),
        ("Hi there|Your workout is nil today", "nil"),
        ("Hi there|undefined", "undefined"),
        ("Hi Optional(\"Ana\")|Ready?", "Optional("),
        ("Hi %@|Ready?", "%@"),
        ("Hi there|Value: NaN", "nan"),
    ]

    @Test(arguments: leftovers)
    func placeholderTextIsRejected(text: String, fragment: String) {
        #expect(throws: OutputProblem.placeholder(fragment)) { try validate(text).get() }
    }

    /// Every fragment is caught wherever it sits, first in the answer, last, or alone: the scan
    /// that rules fragments out by their first byte must know each one's.
    @Test(arguments: CoachOutput.leftoverFragments)
    func everyLeftoverFragmentIsCaughtAnywhere(fragment: String) {
        // The first fragment in the list's order is named ("${" holds "{").
        let named = CoachOutput.leftoverFragments.first { fragment.contains($0) }!
        for text in ["\(fragment) here|Ready?", "Hi there|Ready \(fragment)", "Hi|x\(fragment)"] {
            #expect(throws: OutputProblem.placeholder(named), "\(text)") { try validate(text).get() }
        }
    }

    @Test(arguments: ["vanilla smoothie", "annul nothing", "a nullable plan", "Nile cruise"])
    func wordsThatMerelyContainALeftoverPass(body: String) throws {
        #expect(try validate("Snack idea 🍦|\(body)").get().body == body)
    }

    @Test func mojibakeAndControlCharactersAreRejected() {
        #expect(throws: OutputProblem.encodingGarbage("â€")) { try validate("Good morning â€“ Ana|Ready?").get() }
        #expect(throws: OutputProblem.encodingGarbage("\u{FFFD}")) { try validate("Good \u{FFFD}|Ready?").get() }
        #expect(throws: OutputProblem.controlCharacter) { try validate("Good\u{7} morning|Ready?").get() }
        #expect(throws: OutputProblem.controlCharacter) { try validate("Good morning|Ready\u{202E}?").get() }
    }

    @Test func emojiSequencesWithJoinersAreNotControlCharacters() throws {
        #expect(try validate("Family walk 👨‍👩‍👧|Bring everyone along today.").get().title == "Family walk 👨‍👩‍👧")
    }

    static let personal: [(String, PrivacyLevel, PersonalDataKind)] = [
        ("Plan sent 📧|Check ana.lima@example.com for details.", .public, .email),
        ("Plan sent 📧|Check coach@airfit.example for details.", .public, .email),
        ("Call us 📞|Ring +1 415 555 0199 any time.", .public, .phoneNumber),
        ("Call us 📞|Ring 020 7946 0958 any time.", .public, .phoneNumber),
        ("Good morning, Ana Lima ☀️|Ready?", .public, .fullName),
        ("Good morning, Ana ☀️|Ready?", .private, .firstName),
        ("Great progress 💪|You're down to 82 kg.", .private, .healthFigure),
        ("Great progress 💪|Resting heart rate 58 this week.", .private, .healthFigure),
        ("On fire 🔥|That's a 12-day streak.", .private, .healthFigure),
        ("Solid week 📊|You hit 80% of your plan.", .private, .healthFigure),
    ]

    @Test(arguments: personal)
    func personalDataBeyondTheLevelIsRejected(text: String, level: PrivacyLevel, kind: PersonalDataKind) {
        #expect(throws: OutputProblem.personalData(kind)) { try validate(text, level).get() }
    }

    @Test(arguments: [PrivacyLevel.public, .friendsOnly])
    func firstNamesAndFiguresAreFineBelowPrivate(level: PrivacyLevel) throws {
        _ = try validate("Good morning, Ana ☀️|That's a 12-day streak at 82 kg.", level).get()
    }

    @Test func anotherUsersNameAndWordsFollowTheRelationship() throws {
        let comment = "Carla Diaz 💬|“Which shoes do you run in?”"
        #expect(throws: OutputProblem.personalData(.senderName)) {
            try validate(comment, .friendsOnly, senders: [stranger]).get()
        }
        #expect(throws: OutputProblem.personalData(.othersText)) {
            try validate("New comment 💬|“Which shoes do you run in?”", .friendsOnly, senders: [stranger]).get()
        }
        _ = try validate(comment, .public, senders: [stranger]).get()
        _ = try validate("Ben Okafor 💬|“Great pace on that hill today!”", .friendsOnly, senders: [mutualFriend]).get()
        #expect(throws: OutputProblem.personalData(.senderName)) {
            try validate("Ben cheered 👏|Nice one.", .private, senders: [mutualFriend]).get()
        }
    }

    @Test func theWholePayloadMustFit() {
        var big = envelope
        big.threadID = String(repeating: "t", count: 3_900)
        let result = CoachOutput.validate(
            "Good morning ☀️|Ready?", recipient: ana, envelope: big, limits: .lockScreen)
        guard case .failure(.payloadTooLarge(let bytes, 4_096)) = result else {
            Issue.record("expected payloadTooLarge, got \(result)")
            return
        }
        #expect(bytes > 4_096)
    }

    @Test func problemsHaveStableCodes() {
        #expect(OutputProblem.personalData(.email).code == "personalData.email")
        #expect(OutputProblem.titleTooLong(characters: 70, limit: 60).code == "titleTooLong")
        #expect(ContentReason.malformedOutput(.missingSeparator).code == "malformedOutput.missingSeparator")
    }
}
