public import Models

/// The period a grouped social notification sums up: a daily digest says "today", a weekly one
/// "this week", a batch or a single item nothing.
public enum GroupPeriod: String, CaseIterable, Hashable, Sendable {
    /// A batch or a single item.
    case none
    /// A daily digest.
    case today
    /// A weekly digest.
    case thisWeek
}

/// A placeholder of grouped social copy (the `social` section of a template file).
enum SocialField: String, CaseIterable, Sendable {
    /// The first actor's name where the privacy level allows it, else the file's `someone`.
    case sender
    /// What the items are about ("morning run"); the locale's `words.topic` when empty or too long.
    case topic
    /// How many items the group holds.
    case count
    /// Nothing, or a space and the file's word for the digest's period (" today").
    case period

    /// Where each may appear: a sentence about one item names its actor, one about several counts
    /// them and may say over what period.
    static let inOne: [SocialField] = [.sender, .topic]
    static let inMany: [SocialField] = [.count, .topic, .period]
}

/// The grouped social copy of one locale, compiled at load (see `TemplateLibrary.groupSummary`).
struct SocialCopy: Sendable {
    struct Sentences: Sendable {
        var one: [Segment<SocialField>]
        var many: [Segment<SocialField>]
        /// 1-based lines of the two sentences in their file, for the copy check's messages.
        var oneLine = 0
        var manyLine = 0
    }

    var title: String
    /// The body for private users, who are told neither who, nor what, nor how many.
    var hidden: String
    /// 1-based line of `hidden` in its file.
    var hiddenLine = 0
    /// Stands for an actor whose name may not be shown.
    var someone: String
    var today: String
    var thisWeek: String
    /// Indexed by `NotificationKind.ordinal`; nil for kinds that are not social.
    var sentences: [Sentences?]

    /// The social kinds: every one needs its sentences in every file.
    static let kinds = NotificationKind.allCases.filter { $0.category == .social }

    func maxLength(_ field: SocialField, _ words: TemplateWords) -> Int {
        switch field {
        case .sender: max(FieldLimits.sender, someone.count)
        case .topic: max(FieldLimits.topic, words.topic.count)
        case .count: 3
        case .period: 1 + max(today.count, thisWeek.count)
        }
    }
}

extension TemplateLibrary {
    /// What a grouped social notification says: one item, a batch or a digest of one kind, from
    /// the file's `social` section.
    ///
    /// Contract:
    /// - Private users get the file's generic title and `hidden` body whatever the group holds:
    ///   no name, no topic, no count.
    /// - A group of one (`count` 1 or less) names `firstActor` when the privacy level allows it
    ///   (`PrivacyPolicy.showsSender`: public always, friendsOnly for mutual friends only), and
    ///   says the file's `someone` otherwise or when `firstActor` is nil; `period` is not used.
    /// - A group of several says how many, and over which `period`; it names nobody.
    /// - A kind that is not social (never grouped by the engine) gets the generic copy.
    /// - Names are clipped to 30 characters with an ellipsis; an empty or over-long `topic` reads
    ///   as the locale's `words.topic`. Counts are shown as they are.
    ///
    /// Pure and deterministic: the same arguments give the same copy.
    public func groupSummary(
        _ kind: NotificationKind, count: Int, topic: String, firstActor: SocialSender?, period: GroupPeriod,
        privacy: PrivacyLevel
    ) -> Copy {
        let policy = PrivacyPolicy(privacy)
        guard privacy != .private, let sentences = social.sentences[kind.ordinal] else {
            return Copy(title: social.title, body: social.hidden)
        }
        let segments = count <= 1 ? sentences.one : sentences.many
        var body = ""
        for segment in segments {
            switch segment {
            case .text(let text): body += text
            // Social sentences name the sender through `{sender}` and its `someone`; the loader
            // refuses clauses in them.
            case .clause: break
            case .field(.sender):
                if let actor = firstActor, policy.showsSender(actor), let name = actor.name.trimmedOrNil {
                    body += name.clipped(to: FieldLimits.sender)
                } else {
                    body += social.someone
                }
            case .field(.topic):
                if let shown = topic.trimmedOrNil, shown.count <= FieldLimits.topic {
                    body += shown
                } else {
                    body += words.topic
                }
            case .field(.count): body += String(count)
            case .field(.period):
                switch period {
                case .none: break
                case .today: body += " " + social.today
                case .thisWeek: body += " " + social.thisWeek
                }
            }
        }
        return Copy(title: social.title, body: body)
    }
}
