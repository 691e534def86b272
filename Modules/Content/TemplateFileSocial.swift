import Models

/// The `social` section of a template file: the grouped social copy, read and checked like the
/// templates (every kind's sentences present, only the placeholders each sentence may use).
extension TemplateFileLoader {
    func readSocial(_ node: JSONNode, words: TemplateWords) throws(TemplateLoadError) -> SocialCopy {
        let members = try object(node, "social")
        try rejectUnknownKeys(members, allowed: ["title", "hidden", "someone", "periods", "groups"], in: "social")
        func entry(_ key: String, of parent: JSONNode, _ members: [JSONNode.Member], _ path: String)
            throws(TemplateLoadError) -> JSONNode
        {
            guard let member = members.first(where: { $0.key == key }) else {
                throw fail(parent.line, "\(path).\(key)", "missing entry")
            }
            return member.node
        }
        func word(_ node: JSONNode, _ name: String) throws(TemplateLoadError) -> String {
            let value = try string(node, name)
            guard value.trimmedOrNil == value, !value.contains("{"), !value.contains("}") else {
                throw fail(node.line, name, "must be plain text without surrounding spaces or braces")
            }
            return value
        }
        func text(
            _ node: JSONNode, _ name: String, allowed: [SocialField], limit: Int, maxLength: (SocialField) -> Int
        ) throws(TemplateLoadError) -> [Segment<SocialField>] {
            let pattern = try string(node, name)
            let part = name.split(separator: ".").last.map(String.init) ?? name
            let segments: [Segment<SocialField>] = try segments(
                pattern, part: part, line: node.line, name: name, allowed: allowed)
            try checkText(
                pattern, longest: longestLength(segments, maxLength: maxLength), part: part, limit: limit,
                line: node.line, name: name)
            return segments
        }
        let titleNode = try entry("title", of: node, members, "social")
        let title = try string(titleNode, "social.title")
        _ = try text(titleNode, "social.title", allowed: [], limit: limits.maxTitleCharacters) { _ in 0 }
        guard title.unicodeScalars.contains(where: { $0.properties.isEmoji && !$0.isASCII }) else {
            throw fail(titleNode.line, "social.title", "the title has no emoji")
        }
        let hiddenNode = try entry("hidden", of: node, members, "social")
        _ = try text(hiddenNode, "social.hidden", allowed: [], limit: limits.maxBodyCharacters) { _ in 0 }
        let someone = try word(try entry("someone", of: node, members, "social"), "social.someone")
        let periodsNode = try entry("periods", of: node, members, "social")
        let periodMembers = try object(periodsNode, "social.periods")
        try rejectUnknownKeys(periodMembers, allowed: ["today", "thisWeek"], in: "social.periods")
        var social = SocialCopy(
            title: title, hidden: try string(hiddenNode, "social.hidden"), hiddenLine: hiddenNode.line,
            someone: someone,
            today: try word(
                try entry("today", of: periodsNode, periodMembers, "social.periods"), "social.periods.today"),
            thisWeek: try word(
                try entry("thisWeek", of: periodsNode, periodMembers, "social.periods"), "social.periods.thisWeek"),
            sentences: Array(repeating: nil, count: NotificationKind.allCases.count))
        let groupsNode = try entry("groups", of: node, members, "social")
        let groupMembers = try object(groupsNode, "social.groups")
        try rejectUnknownKeys(groupMembers, allowed: Set(SocialCopy.kinds.map(\.rawValue)), in: "social.groups")
        for kind in SocialCopy.kinds {
            let path = "social.groups.\(kind.rawValue)"
            let kindNode = try entry(kind.rawValue, of: groupsNode, groupMembers, "social.groups")
            let sentenceMembers = try object(kindNode, path)
            try rejectUnknownKeys(sentenceMembers, allowed: ["one", "many"], in: path)
            let maxLength = { [social] (field: SocialField) in social.maxLength(field, words) }
            let oneNode = try entry("one", of: kindNode, sentenceMembers, path)
            let manyNode = try entry("many", of: kindNode, sentenceMembers, path)
            let one = try text(
                oneNode, "\(path).one", allowed: SocialField.inOne, limit: limits.maxBodyCharacters,
                maxLength: maxLength)
            let many = try text(
                manyNode, "\(path).many", allowed: SocialField.inMany, limit: limits.maxBodyCharacters,
                maxLength: maxLength)
            social.sentences[kind.ordinal] = SocialCopy.Sentences(
                one: one, many: many, oneLine: oneNode.line, manyLine: manyNode.line)
        }
        return social
    }
}
