import Foundation
import Testing

@testable import Models

/// The identifiers are text wherever bytes leave the process: what they encode, how they
/// compare and what they print must be what the bare string did before they had types.
struct IdentifierTests {
    private struct Holder: Codable, Equatable {
        var user: UserID
        var request: RequestID
        var users: [UserID]
    }

    @Test func anIdentifierEncodesAsItsBareText() throws {
        let holder = Holder(user: "ana.b-1", request: "mealReminder.2027-03-01.lunch", users: ["u2", "u1"])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let json = String(decoding: try encoder.encode(holder), as: UTF8.self)
        #expect(json == #"{"request":"mealReminder.2027-03-01.lunch","user":"ana.b-1","users":["u2","u1"]}"#)
        #expect(try JSONDecoder().decode(Holder.self, from: Data(json.utf8)) == holder)
    }

    @Test func aValueThatIsNotTextDoesNotDecode() {
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(Holder.self, from: Data(#"{"user":7,"request":"r","users":[]}"#.utf8))
        }
    }

    @Test func identifiersSortAndPrintAsTheirText() {
        let names = ["u10", "u2", "Ana", "é", "u1", ""]
        #expect(names.map(UserID.init(rawValue:)).sorted().map(\.rawValue) == names.sorted())
        let id: UserID = "user-\(42)"
        #expect("\(id)" == "user-42")
        #expect(id.description == "user-42")
        #expect(UserID("").isEmpty && !id.isEmpty)
    }

    @Test func equalTextIsEqualAndHashesAlike() {
        #expect(Set<UserID>(["a", "a", "b"]).count == 2)
        #expect(RequestID("x") == RequestID(rawValue: "x"))
    }
}
