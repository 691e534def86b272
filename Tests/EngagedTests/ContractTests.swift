import Foundation
import Hummingbird
import HummingbirdTesting
import Models
import Testing

@testable import engaged

/// The document and the server agree: what Schemathesis found (`.ci/schemathesis.sh`) stays
/// fixed, and the explain enums of openapi.yaml list every value the engine can trace.
@Suite("engaged contract")
struct ContractTests {
    static let document: String = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let path = root.appendingPathComponent("Modules/EngagedAPI/openapi.yaml")
        return (try? String(contentsOf: path, encoding: .utf8)) ?? ""
    }()

    /// The text of the `ExplainItem` schema.
    static var explainItem: Substring {
        guard let start = document.range(of: "    ExplainItem:\n") else { return "" }
        let rest = document[start.upperBound...]
        let end = rest.range(of: "\n    [A-Za-z]+:\n", options: .regularExpression)?.lowerBound ?? rest.endIndex
        return rest[..<end]
    }

    /// Whether `value` is an item of a flow list (`[a, b, c]`) in `text`.
    static func listed(_ value: String, in text: Substring) -> Bool {
        text.range(of: "[\\[ ]\(value)[,\\]]", options: .regularExpression) != nil
    }

    @Test func theExplainSchemaListsEveryReasonAndDecision() {
        let schema = Self.explainItem
        #expect(!schema.isEmpty)
        for reason in ReasonCode.allCases {
            #expect(Self.listed(reason.rawValue, in: schema), "\(reason)")
        }
        for decision in TraceDecision.allCases {
            #expect(Self.listed(decision.rawValue, in: schema), "\(decision)")
        }
    }

    @Test func theDocumentDescribesEveryRouteTheServerHas() {
        for path in [
            "/healthz:", "/readyz:", "/metrics:", "/v1/users/{id}:", "/v1/users/{id}/events:",
            "/v1/users/{id}/schedule:", "/v1/users/{id}/plan:",
            "/v1/users/{id}/explain:", "/v1/admin/clock:", "/v1/users/{id}/tokens:",
        ] {
            #expect(Self.document.contains("\n  \(path)\n"), "\(path)")
        }
    }

    // Found by Schemathesis: an empty social event id reached the store, which refused the
    // ledger row it named, and the client got a 500.
    @Test(arguments: ["", String(repeating: "x", count: 129)])
    func aSocialEventIDMustBe1To128Characters(id: String) async throws {
        let server = try await TestServer()
        try await server.run(.live) { client in
            _ = try await client.send(.put, "/v1/users/ana", berlin)
            let body =
                #"{"type": "socialEvent", "id": "\#(id)", "kind": "leaderboardChange", "actorName": "A", "topic": ""}"#
            let response = try await client.send(.post, "/v1/users/ana/events", body)
            response.expectProblem(422, "invalid-field", field: "id", detailContains: "1 to 128")
        }
    }
}
