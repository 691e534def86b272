import Foundation
import Models
import Testing

@testable import Content

@Suite("Push payload")
struct PushPayloadTests {
    func object(_ payload: PushPayload) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(payload.json.utf8)) as? [String: Any])
    }

    @Test func theApsDictionaryCarriesTheAlertAndItsPresentation() throws {
        let content = NotificationContent(
            kind: .mealReminder, title: "Time for lunch 🍽️", body: "Log your lunch.", interruptionLevel: .timeSensitive,
            relevanceScore: 0.6, sound: .reminder, badge: 3, deepLink: .mealLog(.lunch))
        let payload = try PayloadBuilder.payload(for: content, imageKey: "meal_lunch")
        let root = try object(payload)
        let aps = try #require(root["aps"] as? [String: Any])
        let alert = try #require(aps["alert"] as? [String: String])
        #expect(alert == ["title": "Time for lunch 🍽️", "body": "Log your lunch."])
        #expect(aps["badge"] as? Int == 3)
        #expect(aps["sound"] as? String == "reminder.caf")
        #expect(aps["thread-id"] as? String == "mealReminder")
        #expect(aps["category"] as? String == "MEAL")
        #expect(aps["interruption-level"] as? String == "time-sensitive")
        #expect(aps["relevance-score"] as? Double == 0.6)
        #expect(aps["mutable-content"] as? Int == 1)
        #expect(root["link"] as? String == "engage://meal/log/lunch")
        #expect(root["kind"] as? String == "mealReminder")
        #expect(root["image"] as? String == "meal_lunch")
        #expect(Set(root.keys) == ["aps", "link", "kind", "image"], "custom keys go beside aps")
    }

    @Test func optionalKeysAreLeftOut() throws {
        let content = NotificationContent(
            kind: .hydration, title: "Water 💧", body: "Sip.", sound: nil, badge: nil)
        let aps = try #require(try object(PayloadBuilder.encode(content))["aps"] as? [String: Any])
        #expect(aps["badge"] == nil && aps["sound"] == nil && aps["mutable-content"] == nil)
        #expect(aps["relevance-score"] as? Double == 0.5)
    }

    @Test func aCriticalAlertCarriesTheCriticalSound() throws {
        let content = NotificationContent(
            kind: .securityAlert, title: "Security alert 🔒", body: "New sign-in.", sound: .urgent)
        let aps = try #require(try object(PayloadBuilder.encode(content))["aps"] as? [String: Any])
        let sound = try #require(aps["sound"] as? [String: Any])
        #expect(sound["critical"] as? Int == 1)
        #expect(sound["name"] as? String == "urgent.caf")
        #expect(aps["interruption-level"] as? String == "critical")
    }

    @Test(arguments: ["Quote \" and backslash \\", "Line\nbreak\tand\r", "Bell \u{7} and null \u{0}", "Zoë 👨‍👩‍👧 „Hallo“"])
    func textIsEscapedAndRoundTrips(text: String) throws {
        let content = NotificationContent(kind: .mention, title: text, body: text)
        let alert = try #require(
            (try object(PayloadBuilder.encode(content))["aps"] as? [String: Any])?["alert"] as? [String: String])
        #expect(alert["title"] == text)
        #expect(alert["body"] == text)
    }

    @Test func equalContentGivesEqualBytes() {
        let content = NotificationContent(kind: .achievement, title: "Trophy 🥇", body: "Yours.", relevanceScore: 0.333)
        #expect(PayloadBuilder.encode(content) == PayloadBuilder.encode(content))
        #expect(PayloadBuilder.encode(content).json.contains("\"relevance-score\":0.33"))
    }

    @Test func thePayloadLimitIs4096BytesInclusive() throws {
        var content = NotificationContent(kind: .mention, title: "Hi 👋", body: "")
        let base = PayloadBuilder.encode(content).byteCount
        content.body = String(repeating: "a", count: 4_096 - base)
        #expect(try PayloadBuilder.payload(for: content).byteCount == 4_096)
        content.body += "a"
        #expect(throws: PayloadError.tooLarge(bytes: 4_097, limit: 4_096)) { try PayloadBuilder.payload(for: content) }
    }

    @Test func multiByteCharactersCountAsBytes() {
        let content = NotificationContent(kind: .mention, title: "💧", body: String(repeating: "ü", count: 2_100))
        #expect(PayloadBuilder.encode(content).byteCount > 4_200)
        #expect(throws: PayloadError.self) { try PayloadBuilder.payload(for: content) }
    }

    @Test func templateCopyAlwaysFits() throws {
        let generator = try bundledGenerator()
        var memory = TemplateMemory()
        var rng = SeededGenerator(seed: 8)
        for kind in NotificationKind.allCases {
            let decision = generator.decide(
                nil, for: request(kind, level: .public), memory: &memory, generator: &rng)
            let content = NotificationContent(kind: kind, title: decision.copy.title, body: decision.copy.body)
            #expect(try PayloadBuilder.payload(for: content, imageKey: decision.imageKey).byteCount < 1_024)
        }
    }

    /// The bytes are pinned: key order, the critical-sound dictionary, and the relevance score in
    /// at most two decimals (0.05, 0.60, 1; a score out of 0...1 is clamped, and not a number is 0).
    @Test func theBytesArePinned() {
        let critical = NotificationContent(
            kind: .mealReminder, title: "Hi", body: "B", interruptionLevel: .critical, relevanceScore: 0.05,
            sound: .reminder, badge: 3, deepLink: .mealLog(.lunch))
        #expect(
            PayloadBuilder.encode(critical).json
                == #"{"aps":{"alert":{"title":"Hi","body":"B"},"badge":3,"sound":{"critical":1,"name":"reminder.caf","#
                + #""volume":1.0},"thread-id":"mealReminder","category":"MEAL","interruption-level":"critical","#
                + #""relevance-score":0.05},"link":"engage://meal/log/lunch","kind":"mealReminder"}"#)
        #expect(PayloadBuilder.encodedBytes(critical) == Array(PayloadBuilder.encode(critical).json.utf8))
        let plain = NotificationContent(
            kind: .hydration, title: "W", subtitle: "S", body: "B", relevanceScore: 0.6, sound: .reminder, badge: nil)
        #expect(
            PayloadBuilder.encode(plain, imageKey: "k").json
                == #"{"aps":{"alert":{"title":"W","subtitle":"S","body":"B"},"sound":"reminder.caf","#
                + #""thread-id":"hydration","category":"HYDRATION","interruption-level":"active","#
                + #""relevance-score":0.60,"mutable-content":1},"link":"engage://dashboard","kind":"hydration","#
                + #""image":"k"}"#)
        for (score, text) in [
            (1.0, "1"), (1.7, "1"), (0.999, "1"), (0, "0.00"), (-3, "0.00"), (.nan, "0.00"), (0.1, "0.10"),
        ] {
            var content = plain
            content.relevanceScore = score
            #expect(PayloadBuilder.encode(content).json.contains(#""relevance-score":\#(text)}"#), "\(score)")
        }
    }

    @Test func theInboxSyncCarriesTheCountsAndThePlanVersionBesideAps() {
        #expect(
            PayloadBuilder.inboxSync(unread: 3, unseen: 1, total: 12, planVersion: 7).json
                == #"{"aps":{"content-available":1},"inbox":{"unread":3,"unseen":1,"total":12},"planVersion":7}"#)
        #expect(
            PayloadBuilder.inboxSync(unread: -4, unseen: 0, total: Int.max, planVersion: Int.max).json
                == #"{"aps":{"content-available":1},"inbox":{"unread":0,"unseen":0,"total":9223372036854775807},"#
                + #""planVersion":9223372036854775807}"#)
        #expect(
            PayloadBuilder.inboxSync(unread: 0, unseen: 0, total: 0, planVersion: -1).json.hasSuffix(
                #""planVersion":0}"#))
    }

    @Test func badgesOfAnySizeAndSignAreWrittenInDecimal() {
        for badge in [0, 7, 10, 99, -1, -10, 123_456, Int.max, Int.min] {
            let content = NotificationContent(kind: .hydration, title: "W", body: "B", badge: badge)
            #expect(PayloadBuilder.encode(content).json.contains(#""badge":\#(badge),"#), "\(badge)")
            #expect(PayloadBuilder.byteCount(of: content) == PayloadBuilder.encode(content).byteCount)
        }
    }

    /// The size counted without writing is the size written, over random content with every
    /// escape, multi-byte text, and each optional part present or not.
    @Test func theCountedSizeIsTheWrittenSize() {
        var generator = SeededGenerator(seed: 31)
        let pieces = [
            "a", "Zoë", "\"", "\\", "\n", "\r", "\t", "\u{01}", "\u{1F}", "\u{7F}", "/", "💧", "\u{2028}", " ", "{}",
        ]
        func text() -> String {
            (0..<Int.random(in: 0...12, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }
                .joined()
        }
        for _ in 0..<2_000 {
            let content = NotificationContent(
                kind: NotificationKind.allCases.randomElement(using: &generator)!, title: text(),
                subtitle: Bool.random(using: &generator) ? text() : nil, body: text(), threadID: text(),
                interruptionLevel: InterruptionLevel.allCases.randomElement(using: &generator)!,
                relevanceScore: Double.random(in: -0.5...1.5, using: &generator),
                sound: Bool.random(using: &generator)
                    ? NotificationSound.allCases.randomElement(using: &generator) : nil,
                badge: Bool.random(using: &generator) ? Int.random(in: -5...500, using: &generator) : nil,
                deepLink: [DeepLink.dashboard, .mealLog(nil), .mealLog(.dinner), .inbox].randomElement(
                    using: &generator)!)
            let imageKey = Bool.random(using: &generator) ? text() : nil
            #expect(
                PayloadBuilder.byteCount(of: content, imageKey: imageKey)
                    == PayloadBuilder.encode(content, imageKey: imageKey).byteCount)
        }
    }
}
