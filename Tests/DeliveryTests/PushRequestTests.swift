import Delivery
import Models
import Testing

@Suite("Push requests")
struct PushRequestTests {
    static let token = String(repeating: "0f", count: 32)
    static let id = "6f1c2b3a-0000-8000-8000-00000000002a"

    func request(
        id: String = id, token: String = token, type: PushRequest.PushType = .alert,
        priority: PushRequest.Priority? = nil, topic: String = "com.example.fitness", collapseID: String? = nil,
        payloadBytes: Int = 20
    ) -> PushRequest {
        PushRequest(
            id: id, deviceToken: token, environment: .production, pushType: type, topic: topic, priority: priority,
            collapseID: collapseID, payload: Array(repeating: UInt8(ascii: " "), count: payloadBytes))
    }

    @Test func priorityDefaultsToTenForAlertsAndFiveOtherwise() {
        #expect(request(type: .alert).priority == .immediate)
        #expect(request(type: .background).priority == .powerConsiderate)
        #expect(request(type: .liveactivity).priority == .powerConsiderate)
        #expect(request(type: .liveactivity, priority: .immediate).priority == .immediate)
    }

    @Test func liveActivitiesGetTheTopicSuffix() {
        #expect(request(type: .alert).apnsTopic == "com.example.fitness")
        #expect(request(type: .liveactivity).apnsTopic == "com.example.fitness.push-type.liveactivity")
    }

    @Test func expirationHeaderIsZeroForNowOrNeverAndEpochSecondsOtherwise() {
        #expect(PushRequest.Expiration.nowOrNever.headerValue == "0")
        #expect(PushRequest.Expiration.at(Instant(secondsSinceEpoch: 1_803_967_200)).headerValue == "1803967200")
    }

    @Test(
        arguments: [
            (4096, nil), (4097, "413 PayloadTooLarge"), (0, "400 PayloadEmpty"),
        ] as [(Int, String?)])
    func payloadLimit(bytes: Int, reason: String?) {
        #expect(request(payloadBytes: bytes).invalidReason?.description == reason)
    }

    @Test func collapseIDIsAtMost64Bytes() {
        #expect(request(collapseID: String(repeating: "c", count: 64)).invalidReason == nil)
        #expect(request(collapseID: String(repeating: "c", count: 65)).invalidReason?.reason == "BadCollapseId")
        #expect(request(collapseID: String(repeating: "é", count: 33)).invalidReason?.reason == "BadCollapseId")
    }

    @Test(arguments: [
        ("ABCDEF" + String(repeating: "0", count: 58), "BadDeviceToken"),
        (String(repeating: "a", count: 63), "BadDeviceToken"),
        (String(repeating: "g", count: 64), "BadDeviceToken"),
    ])
    func tokensAreLowercaseHexWholeBytes(token: String, reason: String) {
        #expect(request(token: token).invalidReason?.reason == reason)
    }

    @Test(arguments: ["6F1C2B3A-0000-8000-8000-00000000002A", "6f1c2b3a000080008000000000000000002a", "", "x"])
    func apnsIDIsALowercaseUUID(id: String) {
        #expect(request(id: id).invalidReason?.reason == "BadMessageId")
    }

    @Test func backgroundPushesMustUsePriorityFive() {
        #expect(request(type: .background, priority: .immediate).invalidReason?.reason == "BadPriority")
        #expect(request(type: .background).invalidReason == nil)
    }

    @Test func topicIsPrintableASCII() {
        #expect(request(topic: "").invalidReason?.reason == "BadTopic")
        #expect(request(topic: "com.example app").invalidReason?.reason == "BadTopic")
    }
}
