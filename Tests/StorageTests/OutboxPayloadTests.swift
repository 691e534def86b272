import LiveActivity
import Models
import Storage
import Testing

/// An outbox row's payload is typed; JSON is what the stores keep, read back by the row's channel.
@Suite("OutboxPayload")
struct OutboxPayloadTests {
    static let t0 = Instant(iso8601: "2027-03-01T08:00:00Z")!

    static let request = NotificationRequest(
        identifier: "mealReminder.2027-03-01.lunch",
        content: NotificationContent(
            kind: .mealReminder, title: "Lunch \"time\"", subtitle: "ü", body: "Log it / now", badge: 3,
            deepLink: .mealLog(.lunch)),
        trigger: .calendar(CalendarMatch(hour: 12, minute: 30), repeats: true))

    static let command = LiveActivityCommand(
        activityID: "a-1", event: .update,
        attributes: .meal(MealActivityAttributes(meal: .lunch, targetCalories: 700, targetProteinGrams: 35)),
        content: LiveActivityContent(
            state: .meal(.init(itemsLogged: 2, totalCalories: 640, totalProteinGrams: 31, lastFoodItem: "Soup")),
            staleDate: t0 + 600),
        priority: .low, at: t0, pushToken: "ab12", sequence: 4)

    @Test(arguments: [
        (OutboxPayload.notification(request), OutboxChannel.push),
        (.notification(request), .inbox),
        (.sync, .silent),
        (.job("engagementAnalysis"), .job),
        (.liveActivity(command), .liveActivity),
    ])
    func eachKindOfWorkReadsBackAsWritten(payload: OutboxPayload, channel: OutboxChannel) {
        #expect(OutboxPayload.stored(payload.storedText, channel: channel) == payload)
    }

    @Test func theStoredTextIsJSONWithSortedKeysAsRowsHaveAlwaysBeenWritten() {
        #expect(OutboxPayload.sync.storedText == "{}")
        #expect(OutboxPayload.job("lapseDetection").storedText == #"{"job":"lapseDetection"}"#)
        // A row as the outbox has always written it (JSONEncoder, sorted keys) reads back, and is
        // written again byte for byte.
        let stored =
            #"{"content":{"badge":3,"body":"Log it \/ now","category":"MEAL","deepLink":"engage:\/\/meal\/log\/lunch","interruptionLevel":"active","kind":"mealReminder","relevanceScore":0.5,"sound":"reminder","subtitle":"ü","threadID":"mealReminder","title":"Lunch \"time\""},"identifier":"mealReminder.2027-03-01.lunch","trigger":{"calendar":{"_0":{"hour":12,"minute":30},"repeats":true}}}"#
        #expect(OutboxPayload.stored(stored, channel: .push) == .notification(Self.request))
        #expect(OutboxPayload.notification(Self.request).storedText == stored)
        #expect(OutboxPayload.stored(#"{"job":"lapseDetection"}"#, channel: .job) == .job("lapseDetection"))
    }

    @Test func textThatIsNotItsChannelsPayloadIsKeptUnreadableNotGuessed() {
        let jobText = OutboxPayload.job("lapseDetection").storedText
        #expect(OutboxPayload.stored(jobText, channel: .push) == .unreadable(jobText))
        #expect(OutboxPayload.stored("", channel: .inbox) == .unreadable(""))
        #expect(OutboxPayload.stored("{not json", channel: .liveActivity) == .unreadable("{not json"))
        #expect(OutboxPayload.stored("{}", channel: .job) == .unreadable("{}"))
        // What is kept is written back unchanged.
        #expect(OutboxPayload.unreadable("{not json").storedText == "{not json")
        // A badge sync carries nothing: its counts are read when it is sent.
        #expect(OutboxPayload.stored("anything", channel: .silent) == .sync)
    }

    @Test func theNotificationIsAPushOrInboxRowsAndNoOtherWorks() {
        #expect(OutboxPayload.notification(Self.request).notification == Self.request)
        #expect(OutboxPayload.sync.notification == nil)
        #expect(OutboxPayload.job("x").notification == nil)
    }
}
