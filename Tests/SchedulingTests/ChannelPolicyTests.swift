import Models
import Scheduling
import Testing

@Suite("Channel policy")
struct ChannelPolicyTests {
    static let dueAt = Instant(iso8601: "2027-03-01T12:00:00Z")!

    @Test(arguments: NotificationKind.allCases)
    func everyKindIsLocalOrRemoteByWhereItsTriggerHappens(kind: NotificationKind) {
        let channel = ChannelPolicy.channel(for: kind)
        #expect(channel == .local || channel == .remote)
        // Other people's actions and system notices happen on the server.
        if kind.isSocial || kind.category == .system || kind == .reEngagement { #expect(channel == .remote) }
        // The daily routine is planned ahead on the device.
        if [.mealReminder, .hydration, .workoutReminder, .morningGreeting].contains(kind) {
            #expect(channel == .local)
        }
    }

    @Test func aPushExpiresAtItsKindsStalenessDeadlineOrIsNowOrNever() {
        #expect(ChannelPolicy.expiration(of: .mention, dueAt: Self.dueAt) == Self.dueAt + 6 * 3_600)
        #expect(ChannelPolicy.expiration(of: .securityAlert, dueAt: Self.dueAt) == Self.dueAt + 86_400)
        // Hydration is dropped rather than deferred: a late copy is worth nothing.
        #expect(ChannelPolicy.expiration(of: .hydration, dueAt: Self.dueAt) == nil)
    }

    @Test func onlyGroupedSocialCopyCollapsesUnderAnIdentifierOfAtMost64Bytes() {
        #expect(
            ChannelPolicy.collapseID(of: .workoutKudos, requestID: "workoutKudos.2027-03-01.3")
                == "workoutKudos.2027-03-01.3")
        #expect(ChannelPolicy.collapseID(of: .mealReminder, requestID: "mealReminder.2027-03-01.lunch") == nil)
        #expect(ChannelPolicy.collapseID(of: .workoutKudos, requestID: String(repeating: "k", count: 65)) == nil)
        #expect(ChannelPolicy.collapseID(of: .workoutKudos, requestID: String(repeating: "k", count: 64)) != nil)
        #expect(ChannelPolicy.collapseID(of: .workoutKudos, requestID: "") == nil)
        // A mention is sent on its own, never replaced by the next one.
        #expect(ChannelPolicy.collapseID(of: .mention, requestID: "mention.2027-03-01.1") == nil)
    }
}
