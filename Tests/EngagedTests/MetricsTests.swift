import Foundation
import Hummingbird
import HummingbirdTesting
import Models
import Runtime
import Storage
import Testing

@testable import engaged

/// The samples of a Prometheus text body: `name{labels}` (as printed) to value.
private func samples(_ text: String) -> [String: Double] {
    var result: [String: Double] = [:]
    for line in text.split(separator: "\n") where !line.hasPrefix("#") {
        guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
            continue
        }
        result[String(line[..<space])] = value
    }
    return result
}

@Suite("engaged metrics")
struct MetricsTests {
    @Test func metricsCountRequestsDecisionsEventsAndTheOutbox() async throws {
        let server = try await TestServer()
        try await server.run(.live) { client in
            #expect(try await client.send(.put, "/v1/users/ana", berlin).status == .created)
            server.clock.advance(by: 600)
            for key in ["k1", "k1", "k2"] {  // the replay of k1 is neither applied nor counted again
                let response = try await client.send(
                    .post, "/v1/users/ana/events", #"{"type": "appOpened"}"#, headers: headers(idempotencyKey: key))
                #expect(response.status == .accepted)
            }
            _ = try await client.send(.post, "/v1/users/ana/events", #"{"type": "mealLogged", "meal": "lunch"}"#)
            _ = try await client.send(.get, "/v1/users/nobody/schedule")
            _ = try await client.send(.get, "/v1/users/ana/schedule", headers: headers(key: "wrong"))
            _ = try await client.send(.get, "/no/such/route")
            _ = try await client.send(HTTPRequest.Method("PROPFIND")!, "/no/such/route")  // an odd method: `other`

            let response = try await client.send(.get, "/metrics", headers: [:])  // no key needed
            #expect(response.status == .ok)
            #expect(response.contentType?.hasPrefix("text/plain; version=0.0.4") == true)
            let text = response.text
            let values = samples(text)
            let requests = "engaged_http_requests_total"
            #expect(values[#"\#(requests){route="/v1/users/{id}",method="PUT",status="201"}"#] == 1, "\(text)")
            #expect(values[#"\#(requests){route="/v1/users/{id}/events",method="POST",status="202"}"#] == 4)
            #expect(values[#"\#(requests){route="/v1/users/{id}/schedule",method="GET",status="404"}"#] == 1)
            #expect(values[#"\#(requests){route="/v1/users/{id}/schedule",method="GET",status="401"}"#] == 1)
            #expect(values[#"\#(requests){route="NotFound",method="GET",status="404"}"#] == 1)
            #expect(values[#"\#(requests){route="NotFound",method="other",status="404"}"#] == 1)
            let duration = "engaged_http_request_duration_seconds"
            #expect(values[#"\#(duration)_count{route="/v1/users/{id}/events",method="POST"}"#] == 4)
            #expect(values[#"\#(duration)_bucket{route="/v1/users/{id}/events",method="POST",le="+Inf"}"#] == 4)
            #expect(values[#"engaged_events_applied_total{type="appOpened"}"#] == 2)
            #expect(values[#"engaged_events_applied_total{type="mealLogged"}"#] == 1)
            #expect(values["engaged_outbox_depth"] == Double(try server.store.outboxDepth()))
            #expect((values["engaged_outbox_depth"] ?? 0) > 0)

            // Decisions by reason: exactly what the store's trace holds.
            let trace = try server.store.traceRecords(
                userID: "ana", after: TracePosition(at: Instant(secondsSinceEpoch: 0), id: 0), limit: 1_000)
            var expected: [String: Double] = [:]
            for record in trace {
                expected[
                    #"engaged_decisions_total{decision="\#(record.decision.rawValue)",reason="\#(record.reason.rawValue)"}"#,
                    default: 0] += 1
            }
            #expect(!expected.isEmpty)
            #expect(values.filter { $0.key.hasPrefix("engaged_decisions_total{") } == expected)
        }
    }

    @Test func eachServerCountsOnlyItsOwnRequests() async throws {
        try await TestServer().run(.live) { client in
            _ = try await client.send(.put, "/v1/users/ana", berlin)
        }
        try await TestServer().run(.live) { client in
            let values = samples(try await client.send(.get, "/metrics", headers: [:]).text)
            #expect(values.keys.filter { $0.hasPrefix("engaged_http_requests_total{route=\"/v1/users/{id}\"") }.isEmpty)
            #expect(values.keys.filter { $0.hasPrefix("engaged_decisions_total") }.isEmpty)
        }
    }
}
