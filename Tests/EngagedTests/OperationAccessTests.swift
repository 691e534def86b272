import Foundation
import Testing

@testable import engaged

/// The server's table of credentials by operation says what the document's `security` says: an
/// operation the table got wrong would be open, or closed to the app, without a test failing.
@Suite("engaged: each operation's credentials")
struct OperationAccessTests {
    /// Each operation of openapi.yaml, with the security schemes it lists (nil: the document's
    /// default, the API key).
    static func documentedSecurity() throws -> [String: Set<String>?] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let document = try String(
            contentsOf: root.appendingPathComponent("Modules/EngagedAPI/openapi.yaml"), encoding: .utf8)
        let lines = document.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let paths = lines.firstIndex(of: "paths:") ?? 0
        let components = lines.firstIndex(of: "components:") ?? lines.count
        var operations: [String: Set<String>?] = [:]
        for index in paths..<components {
            let line = lines[index].trimmingCharacters(in: .whitespaces)
            guard line.hasPrefix("operationId: ") else { continue }
            var schemes: Set<String>? = nil
            // The operation's lines: until the next method or path (indented four spaces or fewer).
            var next = index + 1
            while next < components, lines[next].isEmpty || lines[next].prefix(while: { $0 == " " }).count > 4 {
                let text = lines[next].trimmingCharacters(in: .whitespaces)
                if text == "security: []" { schemes = [] }
                if text == "security:" { schemes = [] }
                if schemes != nil, text.hasPrefix("- "), text.hasSuffix(": []"), !text.contains("name:") {
                    schemes?.insert(String(text.dropFirst(2).dropLast(4)))
                }
                next += 1
            }
            operations[String(line.dropFirst("operationId: ".count))] = schemes
        }
        return operations
    }

    @Test func theTableIsTheDocuments() throws {
        let documented = try Self.documentedSecurity()
        #expect(documented.count == 18)
        #expect(Set(documented.keys) == Set(OperationAccess.byOperation.keys))
        for (operation, schemes) in documented {
            let expected: OperationAccess =
                switch schemes {
                case nil, ["apiKey"]?: .apiKey
                case []?: .open
                case ["apiKey", "userToken"]?: .apiKeyOrUserToken
                default: .open  // a combination the server has no rule for: fails below
                }
            #expect(schemes == nil || [[], ["apiKey"], ["apiKey", "userToken"]].contains(schemes!), "\(operation)")
            #expect(OperationAccess.byOperation[operation] == expected, "\(operation)")
        }
    }

    /// Each operation's body as the document states it: required, optional, or none (nil).
    static func documentedBodies() throws -> [String: Bool?] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let lines = try String(
            contentsOf: root.appendingPathComponent("Modules/EngagedAPI/openapi.yaml"), encoding: .utf8
        ).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var bodies: [String: Bool?] = [:]
        var operation: String?
        for (index, line) in lines.enumerated() {
            let text = line.trimmingCharacters(in: .whitespaces)
            if text.hasPrefix("operationId: ") {
                operation = String(text.dropFirst("operationId: ".count))
                bodies[operation!] = .some(nil)
            } else if text == "requestBody:", let operation, index + 1 < lines.count {
                bodies[operation] = lines[index + 1].trimmingCharacters(in: .whitespaces) == "required: true"
            } else if text == "components:" {
                break
            }
        }
        return bodies
    }

    /// The strict body middleware's lists of which operations read a body are the document's.
    @Test func theBodyListsAreTheDocuments() throws {
        let documented = try Self.documentedBodies()
        #expect(documented.count == 18)
        let required = Set(documented.filter { $0.value == .some(true) }.keys)
        let optional = Set(documented.filter { $0.value == .some(false) }.keys)
        #expect(required == JSONBodyMiddleware.requiredBodies)
        #expect(optional == JSONBodyMiddleware.optionalBodies)
    }

    @Test func anOperationMissingFromTheTableTakesTheAPIKey() {
        #expect(OperationAccess.of("anOperationAddedLater") == .apiKey)
    }
}
