import Foundation
import Models
import Testing

@testable import Content

// MARK: - Fixtures

private let ben = SocialSender(name: "Ben Friend", isMutualFriend: true)
private let carla = SocialSender(name: "Carla Friend", isMutualFriend: false)

/// One grouped social notification and the body it must read.
struct GroupCase: Sendable, CustomTestStringConvertible {
    var kind: NotificationKind
    var count: Int
    var actor: SocialSender
    var period: GroupPeriod
    var privacy: PrivacyLevel
    var body: String

    init(
        _ kind: NotificationKind, _ count: Int, _ actor: SocialSender, _ period: GroupPeriod, _ privacy: PrivacyLevel,
        _ body: String
    ) {
        self.kind = kind
        self.count = count
        self.actor = actor
        self.period = period
        self.privacy = privacy
        self.body = body
    }

    var testDescription: String { "\(kind.rawValue) x\(count) \(period.rawValue) \(privacy.rawValue): \(body)" }
}

/// `GroupSummary.copy` of Modules/Engagement/SocialGroups.swift as of f94a522, verbatim but for
/// its inputs (a group's first item becomes `actor`, its mode `period`): the English the
/// simulation's digest was recorded with. `actor` stands for the group's first item, so it is
/// never nil for a group of one.
private func recordedEnglish(
    _ kind: NotificationKind, count: Int, topic: String, actor: SocialSender, period: GroupPeriod,
    privacy: PrivacyLevel
) -> Copy {
    let verb: String
    switch kind {
    case .workoutKudos: verb = "cheered your \(topic)"
    case .workoutComment: verb = count == 1 ? "commented on your \(topic)" : "commented on your workouts"
    case .newFollower: verb = "started following you"
    case .followRequest: verb = "asked to follow you"
    case .mention: verb = "mentioned you"
    case .challengeInvite: verb = "invited you to a challenge"
    default: verb = "moved on the leaderboard"
    }
    if privacy == .private { return Copy(title: "New activity 👥", body: "You have new notifications.") }
    if count == 1 {
        let allowed = privacy == .public || actor.isMutualFriend
        return Copy(title: "New activity 👥", body: "\(allowed ? actor.name : "Someone") \(verb).")
    }
    let suffix = period == .thisWeek ? " this week" : period == .today ? " today" : ""
    return Copy(title: "New activity 👥", body: "\(count) people \(verb)\(suffix).")
}

private let socialKinds: [NotificationKind] = [
    .newFollower, .followRequest, .workoutKudos, .workoutComment, .mention, .challengeInvite, .leaderboardChange,
]

// MARK: - English: exactly what the engine said before the copy moved into en.json

@Suite("Grouped social copy: English as recorded")
struct GroupedSocialEnglishTests {
    let english: TemplateLibrary

    init() throws { english = try bundledEnglish() }

    static let cases: [GroupCase] = [
        .init(.newFollower, 1, carla, .none, .public, "Carla Friend started following you."),
        .init(.newFollower, 1, carla, .today, .friendsOnly, "Someone started following you."),
        .init(.newFollower, 1, ben, .none, .friendsOnly, "Ben Friend started following you."),
        .init(.newFollower, 3, ben, .none, .public, "3 people started following you."),
        .init(.newFollower, 2, carla, .today, .friendsOnly, "2 people started following you today."),
        .init(.newFollower, 12, ben, .thisWeek, .public, "12 people started following you this week."),
        .init(.newFollower, 1, ben, .none, .private, "You have new notifications."),
        .init(.newFollower, 4, carla, .thisWeek, .private, "You have new notifications."),
        .init(.followRequest, 1, carla, .none, .public, "Carla Friend asked to follow you."),
        .init(.followRequest, 1, carla, .today, .friendsOnly, "Someone asked to follow you."),
        .init(.followRequest, 1, ben, .none, .friendsOnly, "Ben Friend asked to follow you."),
        .init(.followRequest, 3, ben, .none, .public, "3 people asked to follow you."),
        .init(.followRequest, 2, carla, .today, .friendsOnly, "2 people asked to follow you today."),
        .init(.followRequest, 12, ben, .thisWeek, .public, "12 people asked to follow you this week."),
        .init(.followRequest, 1, ben, .none, .private, "You have new notifications."),
        .init(.followRequest, 4, carla, .thisWeek, .private, "You have new notifications."),
        .init(.workoutKudos, 1, carla, .none, .public, "Carla Friend cheered your morning run."),
        .init(.workoutKudos, 1, carla, .today, .friendsOnly, "Someone cheered your morning run."),
        .init(.workoutKudos, 1, ben, .none, .friendsOnly, "Ben Friend cheered your morning run."),
        .init(.workoutKudos, 3, ben, .none, .public, "3 people cheered your morning run."),
        .init(.workoutKudos, 2, carla, .today, .friendsOnly, "2 people cheered your morning run today."),
        .init(.workoutKudos, 12, ben, .thisWeek, .public, "12 people cheered your morning run this week."),
        .init(.workoutKudos, 1, ben, .none, .private, "You have new notifications."),
        .init(.workoutKudos, 4, carla, .thisWeek, .private, "You have new notifications."),
        .init(.workoutComment, 1, carla, .none, .public, "Carla Friend commented on your morning run."),
        .init(.workoutComment, 1, carla, .today, .friendsOnly, "Someone commented on your morning run."),
        .init(.workoutComment, 1, ben, .none, .friendsOnly, "Ben Friend commented on your morning run."),
        .init(.workoutComment, 3, ben, .none, .public, "3 people commented on your workouts."),
        .init(.workoutComment, 2, carla, .today, .friendsOnly, "2 people commented on your workouts today."),
        .init(.workoutComment, 12, ben, .thisWeek, .public, "12 people commented on your workouts this week."),
        .init(.workoutComment, 1, ben, .none, .private, "You have new notifications."),
        .init(.workoutComment, 4, carla, .thisWeek, .private, "You have new notifications."),
        .init(.mention, 1, carla, .none, .public, "Carla Friend mentioned you."),
        .init(.mention, 1, carla, .today, .friendsOnly, "Someone mentioned you."),
        .init(.mention, 1, ben, .none, .friendsOnly, "Ben Friend mentioned you."),
        .init(.mention, 3, ben, .none, .public, "3 people mentioned you."),
        .init(.mention, 2, carla, .today, .friendsOnly, "2 people mentioned you today."),
        .init(.mention, 12, ben, .thisWeek, .public, "12 people mentioned you this week."),
        .init(.mention, 1, ben, .none, .private, "You have new notifications."),
        .init(.mention, 4, carla, .thisWeek, .private, "You have new notifications."),
        .init(.challengeInvite, 1, carla, .none, .public, "Carla Friend invited you to a challenge."),
        .init(.challengeInvite, 1, carla, .today, .friendsOnly, "Someone invited you to a challenge."),
        .init(.challengeInvite, 1, ben, .none, .friendsOnly, "Ben Friend invited you to a challenge."),
        .init(.challengeInvite, 3, ben, .none, .public, "3 people invited you to a challenge."),
        .init(.challengeInvite, 2, carla, .today, .friendsOnly, "2 people invited you to a challenge today."),
        .init(.challengeInvite, 12, ben, .thisWeek, .public, "12 people invited you to a challenge this week."),
        .init(.challengeInvite, 1, ben, .none, .private, "You have new notifications."),
        .init(.challengeInvite, 4, carla, .thisWeek, .private, "You have new notifications."),
        .init(.leaderboardChange, 1, carla, .none, .public, "Carla Friend moved on the leaderboard."),
        .init(.leaderboardChange, 1, carla, .today, .friendsOnly, "Someone moved on the leaderboard."),
        .init(.leaderboardChange, 1, ben, .none, .friendsOnly, "Ben Friend moved on the leaderboard."),
        .init(.leaderboardChange, 3, ben, .none, .public, "3 people moved on the leaderboard."),
        .init(.leaderboardChange, 2, carla, .today, .friendsOnly, "2 people moved on the leaderboard today."),
        .init(.leaderboardChange, 12, ben, .thisWeek, .public, "12 people moved on the leaderboard this week."),
        .init(.leaderboardChange, 1, ben, .none, .private, "You have new notifications."),
        .init(.leaderboardChange, 4, carla, .thisWeek, .private, "You have new notifications."),
    ]

    @Test(arguments: cases)
    func theEnglishCopyIsPinned(_ row: GroupCase) {
        let copy = english.groupSummary(
            row.kind, count: row.count, topic: "morning run", firstActor: row.actor, period: row.period,
            privacy: row.privacy)
        #expect(copy == Copy(title: "New activity 👥", body: row.body))
    }

    /// Every kind, size, privacy level, period, friendship and simulated topic against the code
    /// the copy replaced, so the simulation's digest cannot move.
    @Test(arguments: socialKinds)
    func everyCombinationMatchesTheRecordedCode(kind: NotificationKind) {
        for count in [1, 2, 3, 10, 250] {
            for privacy in PrivacyLevel.allCases {
                for period in GroupPeriod.allCases {
                    for actor in [ben, carla, SocialSender(name: "Kiri Friend", isMutualFriend: true)] {
                        for topic in ["morning run", "evening lift", "yoga flow"] {
                            let copy = english.groupSummary(
                                kind, count: count, topic: topic, firstActor: actor, period: period, privacy: privacy)
                            let recorded = recordedEnglish(
                                kind, count: count, topic: topic, actor: actor, period: period, privacy: privacy)
                            #expect(copy == recorded, "\(kind) x\(count) \(privacy) \(period) \(actor.name) \(topic)")
                        }
                    }
                }
            }
        }
    }

    @Test func aNilActorIsSomeone() {
        for privacy in [PrivacyLevel.public, .friendsOnly] {
            #expect(
                english.groupSummary(
                    .mention, count: 1, topic: "", firstActor: nil, period: .none, privacy: privacy
                ).body == "Someone mentioned you.")
        }
    }

    @Test func theCopyFollowsThePrivacyPolicy() {
        for privacy in PrivacyLevel.allCases {
            for actor in [ben, carla] {
                let body = english.groupSummary(
                    .workoutKudos, count: 1, topic: "yoga flow", firstActor: actor, period: .none, privacy: privacy
                ).body
                let audit = PrivacyAudit.violations(
                    inText: body, field: "body", for: recipient(privacy), senders: [actor])
                #expect(audit.isEmpty, "\(privacy) \(actor.name): \(body)")
                #expect(body.contains(actor.name) == PrivacyPolicy(privacy).showsSender(actor))
            }
        }
    }

    /// Outside what the simulation produces: free text is bounded as in the templates.
    @Test func freeTextIsBoundedAsInTheTemplates() {
        let long = String(repeating: "x", count: 80)
        let named = english.groupSummary(
            .workoutKudos, count: 1, topic: long, firstActor: SocialSender(name: long, isMutualFriend: true),
            period: .none, privacy: .public)
        #expect(named.body == String(repeating: "x", count: 29) + "… cheered your workout.")
        let blank = english.groupSummary(
            .workoutComment, count: 1, topic: "  ", firstActor: SocialSender(name: " ", isMutualFriend: true),
            period: .none, privacy: .public)
        #expect(blank.body == "Someone commented on your workout.")
    }

    @Test(arguments: NotificationKind.allCases.filter { !socialKinds.contains($0) })
    func aKindThatIsNotSocialGetsTheGenericCopy(kind: NotificationKind) {
        let copy = english.groupSummary(
            kind, count: 3, topic: "morning run", firstActor: ben, period: .today, privacy: .public)
        #expect(copy == Copy(title: "New activity 👥", body: "You have new notifications."))
    }
}

// MARK: - German

@Suite("Grouped social copy: German")
struct GroupedSocialGermanTests {
    let german: TemplateLibrary

    init() throws { german = try bundledCatalog().library(for: "de-AT") }

    static let cases: [GroupCase] = [
        .init(.workoutKudos, 1, ben, .none, .public, "Ben Friend hat dein Krafttraining gefeiert."),
        .init(.workoutKudos, 3, ben, .today, .public, "3 Personen haben heute dein Krafttraining gefeiert."),
        .init(.workoutKudos, 3, ben, .none, .friendsOnly, "3 Personen haben dein Krafttraining gefeiert."),
        .init(.workoutComment, 1, carla, .none, .public, "Carla Friend hat dein Krafttraining kommentiert."),
        .init(.workoutComment, 2, ben, .thisWeek, .public, "2 Personen haben diese Woche deine Trainings kommentiert."),
        .init(.newFollower, 1, ben, .none, .friendsOnly, "Ben Friend folgt dir jetzt."),
        .init(.newFollower, 5, carla, .none, .public, "5 Personen sind dir gefolgt."),
        .init(.newFollower, 5, carla, .today, .public, "5 Personen sind dir heute gefolgt."),
        .init(.followRequest, 1, carla, .none, .friendsOnly, "Jemand möchte dir folgen."),
        .init(
            .followRequest, 2, ben, .thisWeek, .public,
            "2 Personen haben dir diese Woche eine Follow-Anfrage geschickt."),
        .init(.mention, 1, carla, .today, .friendsOnly, "Jemand hat dich erwähnt."),
        .init(.mention, 4, ben, .today, .public, "4 Personen haben dich heute erwähnt."),
        .init(.challengeInvite, 1, ben, .none, .public, "Ben Friend hat dich zu einer Challenge eingeladen."),
        .init(.challengeInvite, 4, ben, .today, .public, "4 Personen haben dich heute zu einer Challenge eingeladen."),
        .init(.leaderboardChange, 1, carla, .none, .public, "Carla Friend hat sich in der Bestenliste bewegt."),
        .init(
            .leaderboardChange, 6, carla, .thisWeek, .public,
            "6 Personen haben sich diese Woche in der Bestenliste bewegt."),
        .init(.workoutKudos, 1, ben, .none, .private, "Du hast neue Benachrichtigungen."),
        .init(.mention, 7, ben, .thisWeek, .private, "Du hast neue Benachrichtigungen."),
    ]

    @Test(arguments: cases)
    func theGermanCopyReadsNaturally(_ row: GroupCase) {
        let copy = german.groupSummary(
            row.kind, count: row.count, topic: "Krafttraining", firstActor: row.actor, period: row.period,
            privacy: row.privacy)
        #expect(copy == Copy(title: "Neue Aktivität 👥", body: row.body))
    }

    @Test func anUnknownLanguageFallsBackToEnglish() throws {
        let copy = try bundledCatalog().library(for: "fr").groupSummary(
            .mention, count: 2, topic: "", firstActor: nil, period: .today, privacy: .public)
        #expect(copy.body == "2 people mentioned you today.")
    }
}

// MARK: - A file with broken social copy does not load

@Suite("Grouped social copy: a broken file fails with file, line and entry")
struct BrokenSocialCopyTests {
    /// Parses the bundled `language` file with `edit` applied to the line containing `fragment`
    /// (nil deletes it) and returns the error, with the edited line's number.
    func load(
        _ language: String = "en", editing fragment: String, to edit: ((String) -> String)?
    ) throws -> (error: TemplateLoadError?, line: Int) {
        var lines = try bundledText(language).components(separatedBy: "\n")
        let index = try #require(lines.firstIndex { $0.contains(fragment) }, "no line with \(fragment)")
        if let edit {
            lines[index] = edit(lines[index])
        } else {
            lines.remove(at: index)
        }
        do {
            _ = try TemplateLibrary.parse(lines.joined(separator: "\n"), file: "\(language).json")
            return (nil, index + 1)
        } catch {
            return (error, index + 1)
        }
    }

    @Test(arguments: ["en", "de"])
    func aMissingKindNamesTheFileAndTheEntry(language: String) throws {
        let text = try bundledText(language)
        let groupsLine = try #require(lineNumber(of: "\"groups\": {", in: text))
        let (error, _) = try load(language, editing: "\"mention\": {", to: nil)
        let failure = try #require(error)
        #expect(failure.file == "\(language).json")
        #expect(failure.name == "social.groups.mention")
        #expect(failure.line == groupsLine)
        #expect(failure.problem == "missing entry")
        #expect(failure.description == "\(language).json:\(groupsLine): social.groups.mention: missing entry")
    }

    @Test func aMissingSentenceNamesItsEntry() throws {
        let (error, line) = try load(editing: "\"workoutComment\": {") {
            $0.replacing(#", "many": "{count} people commented on your workouts{period}.""#, with: "")
        }
        let failure = try #require(error)
        #expect(failure.name == "social.groups.workoutComment.many")
        #expect(failure.line == line)
        #expect(failure.problem == "missing entry")
    }

    @Test func aMissingPeriodWordNamesItsEntry() throws {
        let (error, line) = try load(editing: "\"periods\": {") {
            $0.replacing(#", "thisWeek": "this week""#, with: "")
        }
        let failure = try #require(error)
        #expect(failure.name == "social.periods.thisWeek")
        #expect(failure.line == line)
    }

    @Test func aFileWithoutTheSectionDoesNotLoad() throws {
        var text = try bundledText("en")
        let start = try #require(text.range(of: "  \"social\": {"))
        let end = try #require(text.range(of: "  \"templates\": ["))
        text.removeSubrange(start.lowerBound..<end.lowerBound)
        let failure = try #require(throws: TemplateLoadError.self) { try TemplateLibrary.parse(text, file: "en.json") }
        #expect(failure.name == "social")
        #expect(failure.problem.hasPrefix("missing"))
    }

    /// The line holding the first string, the text replaced in it, its replacement, and the
    /// entry and problem the error must name.
    static let brokenEntries: [(String, String, String, String, String)] = [
        (
            "\"workoutKudos\": {", "{sender} cheered your {topic}.", "{sender} cheered your {topc}.",
            "social.groups.workoutKudos.one", "unknown placeholder {topc} in the one; known: {sender} {topic}"
        ),
        (
            "\"mention\": {", "{sender} mentioned you.", "{sender} mentioned you{period}.",
            "social.groups.mention.one", "unknown placeholder {period}"
        ),
        (
            "\"mention\": {", "{count} people mentioned you{period}.", "{sender} and others mentioned you.",
            "social.groups.mention.many", "unknown placeholder {sender} in the many; known: {count} {topic} {period}"
        ),
        (
            "\"hidden\":", "You have new notifications.", "You have {count} new notifications.",
            "social.hidden", "unknown placeholder {count} in the hidden; known: none"
        ),
        ("\"title\": \"New activity", "New activity 👥", "New activity", "social.title", "no emoji"),
        ("\"someone\":", "\"Someone\"", "\" Someone\"", "social.someone", "without surrounding spaces"),
        (
            "\"newFollower\": { \"one\"", "{sender} started following you.", "{sender}  started following you.",
            "social.groups.newFollower.one", "double space"
        ),
        (
            "\"groups\": {", "\"groups\": {", "\"groups\": { \"hydration\": { \"one\": \"x\", \"many\": \"y\" },",
            "social.groups", "unknown key \"hydration\""
        ),
    ]

    @Test(arguments: brokenEntries)
    func aBrokenEntryNamesItsFileLineAndName(
        fragment: String, from: String, to: String, name: String, problem: String
    ) throws {
        var matched = false
        let (error, line) = try load(editing: fragment) {
            matched = $0.contains(from)
            return $0.replacing(from, with: to)
        }
        #expect(matched, "the fixture no longer matches the file")
        let failure = try #require(error, "loaded although broken")
        #expect(failure.file == "en.json")
        #expect(failure.name == name)
        #expect(failure.line == line)
        #expect(failure.problem.contains(problem), "\(failure)")
    }
}
