import Foundation
import LiveActivity
import Models
import Scheduling
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
        (OutboxPayload.alert(request), OutboxChannel.push),
        (.inboxItem(request, shownBy: .local), .inbox),
        (.inboxItem(request, shownBy: .remote), .inbox),
        (.sync, .silent),
        (.job(.engagementAnalysis), .job),
        (.liveActivity(command), .liveActivity),
    ])
    func eachKindOfWorkReadsBackAsWritten(payload: OutboxPayload, channel: OutboxChannel) {
        #expect(OutboxPayload.stored(payload.storedText, channel: channel) == payload)
    }

    @Test func theStoredTextIsJSONWithSortedKeysAsRowsHaveAlwaysBeenWritten() {
        #expect(OutboxPayload.sync.storedText == "{}")
        #expect(OutboxPayload.job(.lapseDetection).storedText == #"{"job":"com.airfit.lapseDetection"}"#)
        // A row as the outbox has always written it (JSONEncoder, sorted keys) reads back, and is
        // written again byte for byte.
        let stored =
            #"{"content":{"badge":3,"body":"Log it \/ now","category":"MEAL","deepLink":"engage:\/\/meal\/log\/lunch","interruptionLevel":"active","kind":"mealReminder","relevanceScore":0.5,"sound":"reminder","subtitle":"ü","threadID":"mealReminder","title":"Lunch \"time\""},"identifier":"mealReminder.2027-03-01.lunch","trigger":{"calendar":{"_0":{"hour":12,"minute":30},"repeats":true}}}"#
        #expect(OutboxPayload.stored(stored, channel: .push) == .alert(Self.request))
        #expect(OutboxPayload.alert(Self.request).storedText == stored)
        #expect(OutboxPayload.stored(#"{"job":"com.airfit.lapseDetection"}"#, channel: .job) == .job(.lapseDetection))
    }

    @Test func textThatIsNotItsChannelsPayloadIsKeptUnreadableNotGuessed() {
        let jobText = OutboxPayload.job(.lapseDetection).storedText
        #expect(OutboxPayload.stored(jobText, channel: .push) == .unreadable(jobText, channel: .push))
        #expect(OutboxPayload.stored("", channel: .inbox) == .unreadable("", channel: .inbox))
        #expect(
            OutboxPayload.stored("{not json", channel: .liveActivity)
                == .unreadable("{not json", channel: .liveActivity))
        #expect(OutboxPayload.stored("{}", channel: .job) == .unreadable("{}", channel: .job))
        // A job this build does not know is kept unreadable, under its channel.
        #expect(
            OutboxPayload.stored(#"{"job":"com.example.someFutureJob"}"#, channel: .job)
                == .unreadable(#"{"job":"com.example.someFutureJob"}"#, channel: .job))
        // What is kept is written back unchanged.
        #expect(OutboxPayload.unreadable("{not json", channel: .push).storedText == "{not json")
        // A badge sync carries nothing: its counts are read when it is sent.
        #expect(OutboxPayload.stored("anything", channel: .silent) == .sync)
    }

    /// An inbox item's text is its request's, with the channel that shows it beside the request's
    /// keys; an item stored before the channel was kept is shown by its kind's channel.
    @Test func anInboxItemKeepsTheChannelThatShowsItAndOlderItemsReadByTheirKind() throws {
        let text = OutboxPayload.inboxItem(Self.request, shownBy: .remote).storedText
        #expect(text.hasPrefix(#"{"content":{"#))
        #expect(text.contains(#""shownBy":"remote""#))
        #expect(try JSONDecoder().decode(NotificationRequest.self, from: Data(text.utf8)) == Self.request)
        let older = OutboxPayload.alert(Self.request).storedText
        #expect(OutboxPayload.stored(older, channel: .inbox) == .inboxItem(Self.request, shownBy: .local))
        var social = Self.request
        social.content.kind = .workoutKudos
        #expect(
            OutboxPayload.stored(OutboxPayload.alert(social).storedText, channel: .inbox)
                == .inboxItem(social, shownBy: .remote))
        // A channel this build does not know is a newer version's item: kept, not guessed.
        let newer = text.replacingOccurrences(of: #""shownBy":"remote""#, with: #""shownBy":"carrierPigeon""#)
        #expect(OutboxPayload.stored(newer, channel: .inbox) == .unreadable(newer, channel: .inbox))
    }

    @Test func theNotificationIsAPushOrInboxRowsAndNoOtherWorks() {
        #expect(OutboxPayload.alert(Self.request).notification == Self.request)
        #expect(OutboxPayload.inboxItem(Self.request, shownBy: .local).notification == Self.request)
        #expect(OutboxPayload.inboxItem(Self.request, shownBy: .local).shownBy == .local)
        #expect(OutboxPayload.alert(Self.request).shownBy == nil)
        #expect(OutboxPayload.sync.notification == nil)
        #expect(OutboxPayload.job(.lapseDetection).notification == nil)
    }
}
