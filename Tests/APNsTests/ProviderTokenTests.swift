import Crypto
import Foundation
import Models
import Testing

@testable import APNs

@Suite("Provider tokens and credentials")
struct ProviderTokenTests {
    let key = P256.Signing.PrivateKey()

    @Test func theTokenIsAnES256JWTWithKeyIDTeamIDAndANumericIssuedAt() throws {
        let credentials = try APNsCredentials(privateKey: key, keyID: keyID, teamID: teamID)
        let token = try ProviderToken.sign(credentials, issuedAt: start)
        let parts = token.jwt.split(separator: ".").map(String.init)
        try #require(parts.count == 3)
        #expect(
            String(decoding: try #require(base64URLDecode(parts[0])), as: UTF8.self)
                == #"{"alg":"ES256","kid":"KEY1234567"}"#)
        #expect(
            String(decoding: try #require(base64URLDecode(parts[1])), as: UTF8.self)
                == #"{"iss":"TEAM123456","iat":1803967200}"#)
        #expect(!token.jwt.contains("=") && !token.jwt.contains("+") && !token.jwt.contains("/"))
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: try #require(base64URLDecode(parts[2])))
        #expect(key.publicKey.isValidSignature(signature, for: Array((parts[0] + "." + parts[1]).utf8)))
    }

    @Test func oneTokenServesUntilItsRefreshAgeThenOneNewOne() async throws {
        let clock = TestClock()
        let tokens = ProviderTokens(
            credentials: try APNsCredentials(privateKey: key, keyID: keyID, teamID: teamID),
            refreshAfterSeconds: 45 * 60, now: { clock.now() })
        let first = try await tokens.current()
        clock.advance(bySeconds: 45 * 60 - 1)
        #expect(try await tokens.current() == first)
        clock.advance(bySeconds: 1)
        let second = try await tokens.current()
        #expect(second.generation == 2 && second.issuedAt == start + 45 * 60)
        #expect(await tokens.signedCount == 2)
        // A renewal asked for with a token already replaced signs nothing.
        #expect(try await tokens.renew(replacing: first) == second)
        #expect(try await tokens.renew(replacing: second).generation == 3)
        #expect(await tokens.signedCount == 3)
    }

    @Test(arguments: [(60, 20 * 60), (50 * 60, 50 * 60), (2 * 3600, 3599)] as [(Int64, Int64)])
    func theRefreshAgeIsKeptWithinApplesBounds(asked: Int64, used: Int64) async throws {
        let clock = TestClock()
        let tokens = ProviderTokens(
            credentials: try APNsCredentials(privateKey: key, keyID: keyID, teamID: teamID),
            refreshAfterSeconds: asked, now: { clock.now() })
        _ = try await tokens.current()
        clock.advance(bySeconds: used - 1)
        #expect(try await tokens.current().generation == 1)
        clock.advance(bySeconds: 1)
        #expect(try await tokens.current().generation == 2)
    }

    @Test func concurrentCallersShareOneSigning() async throws {
        let tokens = ProviderTokens(
            credentials: try APNsCredentials(privateKey: key, keyID: keyID, teamID: teamID), now: { start })
        let all = try await withThrowingTaskGroup(of: ProviderToken.self) { group in
            for _ in 0..<100 { group.addTask { try await tokens.current() } }
            return try await group.reduce(into: Set<ProviderToken>()) { $0.insert($1) }
        }
        #expect(all.count == 1)
        #expect(await tokens.signedCount == 1)
    }

    // MARK: - Credentials

    @Test func aP8FileLoads() throws {
        let path = try temporaryFile(key.pemRepresentation)
        let credentials = try APNsCredentials.load(keyFile: path, keyID: keyID, teamID: teamID)
        #expect(credentials.publicKey.rawRepresentation == key.publicKey.rawRepresentation)
        // SEC 1 ("EC PRIVATE KEY") reads too.
        let sec1 = try temporaryFile(
            try P256.Signing.PrivateKey(derRepresentation: key.derRepresentation).pemRepresentation)
        #expect(throws: Never.self) { try APNsCredentials.load(keyFile: sec1, keyID: keyID, teamID: teamID) }
    }

    @Test func aMissingKeyFileSaysSo() {
        #expect(throws: APNsCredentialError.keyFileMissing(path: "/nonexistent/AuthKey.p8")) {
            try APNsCredentials.load(keyFile: "/nonexistent/AuthKey.p8", keyID: keyID, teamID: teamID)
        }
    }

    @Test func aFileThatIsNotPEMSaysSo() throws {
        let path = try temporaryFile("just some text\n")
        #expect(throws: APNsCredentialError.notPEM(path: path)) {
            try APNsCredentials.load(keyFile: path, keyID: keyID, teamID: teamID)
        }
    }

    @Test(arguments: ["P-384", "Ed25519", "certificate"])
    func aKeyThatIsNotP256SaysSo(kind: String) throws {
        let pem: String
        switch kind {
        case "P-384": pem = P384.Signing.PrivateKey().pemRepresentation
        case "Ed25519":
            let der =
                [0x30, 0x2E, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20]
                + Array(Curve25519.Signing.PrivateKey().rawRepresentation)
            pem = "-----BEGIN PRIVATE KEY-----\n\(Data(der).base64EncodedString())\n-----END PRIVATE KEY-----\n"
        default: pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
        }
        let path = try temporaryFile(pem)
        do {
            _ = try APNsCredentials.load(keyFile: path, keyID: keyID, teamID: teamID)
            Issue.record("a \(kind) key loaded")
        } catch {
            guard case .notP256Key(let reportedPath, _) = error else {
                Issue.record("expected notP256Key, got \(error)")
                return
            }
            #expect(reportedPath == path)
            #expect(error.description.contains("P-256"))
        }
    }

    @Test(arguments: ["", "ABC", "abc1234567", "KEY12345678", "KEY-123456"])
    func aBadKeyIDOrTeamIDIsRefusedBeforeTheFileIsRead(id: String) {
        #expect(throws: APNsCredentialError.badKeyID(id)) {
            try APNsCredentials.load(keyFile: "/nonexistent", keyID: id, teamID: teamID)
        }
        #expect(throws: APNsCredentialError.badTeamID(id)) {
            try APNsCredentials.load(keyFile: "/nonexistent", keyID: keyID, teamID: id)
        }
    }

    @Test(arguments: [
        ("https://api.push.apple.com", true), ("https://127.0.0.1:2197", true), ("https://[::1]:443", true),
        ("http://127.0.0.1:8080", false), ("https://", false), ("https://host/3/device", false),
        ("https://host:0", false), ("https://host:99999", false), ("api.push.apple.com", false),
    ])
    func endpointsAreHTTPSHostAndPortOnly(url: String, valid: Bool) {
        #expect(APNsClient.isValidEndpoint(url) == valid)
    }

    func temporaryFile(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("apns-\(UUID().uuidString).p8").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }
}

func base64URLDecode(_ text: String) -> Data? {
    var text = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    while text.count % 4 != 0 { text += "=" }
    return Data(base64Encoded: text)
}
