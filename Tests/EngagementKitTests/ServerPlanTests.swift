import Foundation
import Models
import Testing

@testable import EngagementKit

/// `ServerPlan.decode`: the plan's JSON as the server writes it, each request read whole or
/// named as unreadable, never guessed at.
@Suite("EngagementKit: reading the plan")
struct ServerPlanTests {
    static func body(_ requests: [String], version: String = "4") -> Data {
        Data(
            #"{"version":\#(version),"timeZone":"Asia/Kathmandu","horizonEnd":"2027-03-02T18:15:00Z","requests":[\#(requests.joined(separator: ","))]}"#
                .utf8)
    }

    static func request(
        _ identifier: String = "mealReminder.2027-03-01.lunch", kind: String = "mealReminder",
        trigger: String = #"{"type":"date","fireAt":"2027-03-01T06:45:00Z"}"#, sound: String = #""reminder.caf""#,
        link: String = "engage://meal/log/lunch"
    ) -> String {
        #"{"identifier":"\#(identifier)","kind":"\#(kind)","title":"Lunch","subtitle":null,"body":"Time to eat","categoryIdentifier":"MEAL","threadIdentifier":"mealReminder","interruptionLevel":"active","relevanceScore":0.6,"sound":\#(sound),"userInfo":{"link":"\#(link)","kind":"\#(kind)"},"trigger":\#(trigger),"nextFireAt":"2027-03-01T06:45:00Z","localTime":"2027-03-01T12:30:00+05:45"}"#
    }

    @Test func aPlanIsReadWithEachRequestsContentAndTrigger() throws {
        let plan = try ServerPlan.decode(
            Self.body([
                Self.request(),
                Self.request(
                    "hydration.series.600", kind: "hydration",
                    trigger: #"{"type":"calendar","repeats":true,"hour":10,"minute":0}"#, sound: "null",
                    link: "engage://dashboard"),
            ]))
        #expect(plan.version == 4 && plan.timeZone == "Asia/Kathmandu")
        #expect(plan.horizonEnd == Instant(iso8601: "2027-03-02T18:15:00Z"))
        #expect(plan.unreadable.isEmpty)
        let lunch = try #require(plan.requests.first).request
        #expect(lunch.trigger == .date(Instant(iso8601: "2027-03-01T06:45:00Z")!))
        #expect(lunch.content.kind == .mealReminder && lunch.content.category == .meal)
        #expect(lunch.content.deepLink == .mealLog(.lunch) && lunch.content.sound == .reminder)
        #expect(lunch.content.badge == nil)
        let series = try #require(plan.requests.last).request
        #expect(series.trigger == .calendar(CalendarMatch(hour: 10, minute: 0), repeats: true))
        #expect(series.content.sound == nil)
    }

    @Test(arguments: [
        (request(kind: "teleport"), "kind"),
        (request(trigger: #"{"type":"geofence"}"#), "trigger.type"),
        (request(trigger: #"{"type":"date"}"#), "trigger.fireAt"),
        (request(trigger: #"{"type":"calendar","repeats":true,"hour":25}"#), "trigger: hour 25"),
        (request(trigger: #"{"type":"calendar","repeats":true,"weekday":9,"hour":8}"#), "trigger.weekday"),
        (request(trigger: #"{"type":"calendar","hour":8}"#), "trigger.repeats"),
        (request(link: "engage://nowhere"), "userInfo.link"),
        (request(sound: #""bell.aiff""#), "sound"),
        (request(link: "https://example.com"), "userInfo.link"),
        (request(""), "identifier"),
        (
            request().replacingOccurrences(of: #""kind":"mealReminder"}"#, with: #""kind":"hydration"}"#),
            "userInfo.kind"
        ),
    ])
    func aRequestThisBuildCannotReadIsNamedAndTheRestApplies(request: String, reason: String) throws {
        let plan = try ServerPlan.decode(Self.body([request, Self.request("breakfast")]))
        #expect(plan.requests.map(\.request.identifier) == ["breakfast"])
        #expect(plan.unreadable.count == 1)
        #expect(plan.unreadable.first?.reason.hasPrefix(reason) == true, "\(plan.unreadable)")
    }

    @Test(arguments: [
        ("not json", ""),
        (#"{"timeZone":"UTC","horizonEnd":null,"requests":[]}"#, "version"),
        (#"{"version":-1,"timeZone":"UTC","horizonEnd":null,"requests":[]}"#, "version"),
        (#"{"version":"7","timeZone":"UTC","horizonEnd":null,"requests":[]}"#, "version"),
        (#"{"version":1,"timeZone":"UTC","horizonEnd":null,"requests":[{"identifier":"x"}]}"#, "requests.Index 0.kind"),
        (#"{"version":1,"timeZone":"UTC","horizonEnd":"tomorrow","requests":[]}"#, "horizonEnd"),
    ])
    func aBodyThatIsNotAPlanIsAnErrorNamingTheField(body: String, field: String) {
        #expect(throws: PlanReadError.self) { try ServerPlan.decode(Data(body.utf8)) }
        do {
            _ = try ServerPlan.decode(Data(body.utf8))
        } catch {
            #expect(error.field == field, "\(error)")
        }
    }

    @Test func theSyncPushIsReadAndOtherPushesAreNot() {
        let sync = SyncSignal(
            payload: Data(
                #"{"aps":{"content-available":1},"inbox":{"unread":3,"unseen":1,"total":12},"planVersion":7}"#.utf8))
        #expect(sync == SyncSignal(unread: 3, unseen: 1, total: 12, planVersion: 7))
        #expect(sync?.badge == 3)
        let older = SyncSignal(
            payload: Data(#"{"aps":{"content-available":1},"inbox":{"unread":0,"unseen":0,"total":0}}"#.utf8))
        #expect(older?.planVersion == nil)
        #expect(SyncSignal(payload: Data(#"{"aps":{"alert":{"title":"Hi"}}}"#.utf8)) == nil)
        #expect(SyncSignal(payload: Data(#"{"inbox":{"unread":-1,"unseen":0,"total":0}}"#.utf8)) == nil)
        #expect(SyncSignal(payload: Data("garbage".utf8)) == nil)
    }
}
