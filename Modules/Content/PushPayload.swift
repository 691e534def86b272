public import Models

/// An APNs payload as sent: UTF-8 JSON, keys in a fixed order so equal content gives equal bytes.
public struct PushPayload: Hashable, Sendable {
    public var json: String
    public var byteCount: Int { json.utf8.count }
}

/// A payload APNs would reject (413 PayloadTooLarge).
public enum PayloadError: Error, Hashable, Sendable, CustomStringConvertible {
    case tooLarge(bytes: Int, limit: Int)

    public var description: String {
        switch self {
        case .tooLarge(let bytes, let limit): "payload of \(bytes) bytes exceeds the APNs limit of \(limit)"
        }
    }
}

/// Builds the remote-push (APNs) payload of a notification, with the keys Apple documents:
///
/// ```json
/// {"aps":{"alert":{"title":"…","subtitle":"…","body":"…"},"badge":1,"sound":"reminder.caf",
///   "thread-id":"mealReminder","category":"MEAL","interruption-level":"active","relevance-score":0.60,
///   "mutable-content":1},"link":"engage://meal/log/lunch","kind":"mealReminder","image":"meal_lunch"}
/// ```
///
/// Custom keys (the deep link, the kind, the image key a service extension attaches) go beside
/// `aps`, never inside it. A critical notification carries the critical-sound dictionary. No
/// user identifier is added: the device token already addresses the user.
public enum PayloadBuilder {
    /// APNs' limit for alert pushes (VoIP allows 5120).
    public static let maxBytes = 4_096

    /// The payload, or `PayloadError.tooLarge` when it exceeds `limit` bytes.
    public static func payload(
        for content: NotificationContent, imageKey: String? = nil, limit: Int = maxBytes
    ) throws(PayloadError) -> PushPayload {
        let payload = encode(content, imageKey: imageKey)
        guard payload.byteCount <= limit else { throw .tooLarge(bytes: payload.byteCount, limit: limit) }
        return payload
    }

    /// The payload without the size check.
    public static func encode(_ content: NotificationContent, imageKey: String? = nil) -> PushPayload {
        PushPayload(json: String(decoding: encodedBytes(content, imageKey: imageKey), as: UTF8.self))
    }

    /// The payload's UTF-8 bytes without the size check: `encode(content, imageKey:)`, for a
    /// transport that sends bytes.
    public static func encodedBytes(_ content: NotificationContent, imageKey: String? = nil) -> [UInt8] {
        var output = TextOutput(capacity: 320 + content.title.utf8.count + content.body.utf8.count)
        write(content, imageKey: imageKey, to: &output)
        return output.bytes
    }

    /// The payload's size in bytes, `encode(content, imageKey:).byteCount`, counted without
    /// writing it (the simulator checks the 4 KB limit on every delivery).
    public static func byteCount(of content: NotificationContent, imageKey: String? = nil) -> Int {
        var output = CountingOutput()
        write(content, imageKey: imageKey, to: &output)
        return output.count
    }

    /// Writes the payload in its fixed key order. Every piece is a literal, a value that needs
    /// no escaping (raw values, numbers) or an escaped string, so counting its size builds no
    /// string at all.
    private static func write(_ content: NotificationContent, imageKey: String?, to json: inout some PayloadOutput) {
        json.append("{\"aps\":{\"alert\":{\"title\":")
        json.appendString(content.title)
        if let subtitle = content.subtitle {
            json.append(",\"subtitle\":")
            json.appendString(subtitle)
        }
        json.append(",\"body\":")
        json.appendString(content.body)
        json.append("}")
        if let badge = content.badge {
            json.append(",\"badge\":")
            json.appendDecimal(badge)
        }
        if let sound = content.sound {
            json.append(
                content.interruptionLevel == .critical ? ",\"sound\":{\"critical\":1,\"name\":\"" : ",\"sound\":\"")
            json.appendPlain(sound.rawValue)
            json.append(content.interruptionLevel == .critical ? ".caf\",\"volume\":1.0}" : ".caf\"")
        }
        json.append(",\"thread-id\":")
        json.appendString(content.threadID)
        json.append(",\"category\":\"")
        json.appendPlain(content.category.rawValue)
        json.append("\",\"interruption-level\":\"")
        json.appendPlain(content.interruptionLevel.apnsValue)
        json.append("\",\"relevance-score\":")
        writeRelevance(content.relevanceScore, to: &json)
        if imageKey != nil { json.append(",\"mutable-content\":1") }
        json.append("},\"link\":")
        json.appendString(content.deepLink.description)
        json.append(",\"kind\":\"")
        json.appendPlain(content.kind.rawValue)
        json.append("\"")
        if let imageKey {
            json.append(",\"image\":")
            json.appendString(imageKey)
        }
        json.append("}")
    }

    /// The payload of a badge and inbox sync (a background push): `aps` holds only
    /// `content-available`, as Apple requires of background pushes, and the counts go beside it,
    /// from which the app sets its badge (the unread count) and refreshes its inbox, with the
    /// local plan's version, which the app compares with the one it holds to know whether to
    /// pull its plan:
    ///
    /// ```json
    /// {"aps":{"content-available":1},"inbox":{"unread":3,"unseen":1,"total":12},"planVersion":7}
    /// ```
    /// Negative numbers are written as 0.
    public static func inboxSync(unread: Int, unseen: Int, total: Int, planVersion: Int) -> PushPayload {
        // Written piece by piece, not interpolated: one is sent per change of the badge.
        var output = TextOutput(capacity: 128)
        output.append("{\"aps\":{\"content-available\":1},\"inbox\":{\"unread\":")
        output.appendDecimal(max(0, unread))
        output.append(",\"unseen\":")
        output.appendDecimal(max(0, unseen))
        output.append(",\"total\":")
        output.appendDecimal(max(0, total))
        output.append("},\"planVersion\":")
        output.appendDecimal(max(0, planVersion))
        output.append("}")
        return PushPayload(json: String(decoding: output.bytes, as: UTF8.self))
    }

    /// Two decimals are all a 0...1 ordering needs, and keep the bytes stable: `1`, `0.05`, `0.6`
    /// is written `0.60`. A score that is not a number counts as 0.
    private static func writeRelevance(_ score: Double, to json: inout some PayloadOutput) {
        let hundredths = score.isNaN ? 0 : Int((min(1, max(0, score)) * 100).rounded())
        if hundredths == 100 {
            json.append("1")
            return
        }
        json.append(hundredths < 10 ? "0.0" : "0.")
        json.appendDecimal(hundredths)
    }
}

/// Where `PayloadBuilder` writes a payload: the text, or only its size.
private protocol PayloadOutput {
    /// A literal, written as it is.
    mutating func append(_ text: StaticString)
    /// Text that needs no escaping (raw values), written as it is.
    mutating func appendPlain(_ text: String)
    /// A number in decimal.
    mutating func appendDecimal(_ value: Int)
    /// Text written as a JSON string literal (`JSONEscapeStyle.payload`).
    mutating func appendString(_ text: String)
}

/// The payload's bytes, made a string once they are all written.
private struct TextOutput: PayloadOutput {
    var text = UTF8Text()
    var bytes: [UInt8] { text.bytes }
    init(capacity: Int) { text = UTF8Text(capacity: capacity) }
    mutating func append(_ literal: StaticString) { text.add(literal) }
    mutating func appendPlain(_ plain: String) { text.add(plain) }
    mutating func appendDecimal(_ value: Int) { text.add(value) }
    mutating func appendString(_ string: String) { text.addJSONString(string, style: .payload) }
}

private struct CountingOutput: PayloadOutput {
    var count = 0
    mutating func append(_ text: StaticString) { count += text.withUTF8Buffer { $0.count } }
    mutating func appendPlain(_ text: String) { count += text.utf8.count }
    mutating func appendDecimal(_ value: Int) { count += DecimalText.length(of: value) }
    mutating func appendString(_ text: String) { count += JSONString.byteCount(of: text, style: .payload) }
}

extension NotificationSound {
    /// The sound file in the app bundle: the sound's name, `.caf`.
    public var fileName: String { "\(rawValue).caf" }
}

extension InterruptionLevel {
    /// The `interruption-level` value APNs expects.
    public var apnsValue: String {
        switch self {
        case .passive: "passive"
        case .active: "active"
        case .timeSensitive: "time-sensitive"
        case .critical: "critical"
        }
    }
}
