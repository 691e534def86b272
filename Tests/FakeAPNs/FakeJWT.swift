import Crypto
import Foundation

/// Verifies provider tokens as APNs does: three base64url parts, header `{"alg":"ES256","kid":…}`
/// with a known key id, claims `{"iss":<team id>,"iat":<number>}`, and the ES256 signature over
/// the first two parts.
enum FakeJWT {
    private struct Header: Decodable {
        var alg: String
        var kid: String
    }

    private struct Claims: Decodable {
        var iss: String
        /// A number: a string fails to decode, as APNs refuses it.
        var iat: Int64
    }

    /// The key id and `iat` of a token that verifies; nil otherwise.
    static func verify(
        _ jwt: String, keys: [String: Data], teamID: String
    ) -> (keyID: String, issuedAt: Int64)? {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = decode(parts[0]), let claimBytes = decode(parts[1]),
            let signatureBytes = decode(parts[2]),
            let header = try? JSONDecoder().decode(Header.self, from: headerBytes),
            let claims = try? JSONDecoder().decode(Claims.self, from: claimBytes),
            header.alg == "ES256", let raw = keys[header.kid], claims.iss == teamID,
            let key = try? P256.Signing.PublicKey(rawRepresentation: raw),
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes)
        else { return nil }
        let signingInput = Array(jwt.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        guard key.isValidSignature(signature, for: signingInput) else { return nil }
        return (header.kid, claims.iat)
    }

    /// Base64url without padding; nil when it is not.
    static func decode(_ part: Substring) -> Data? {
        guard !part.contains("="), !part.contains("+"), !part.contains("/") else { return nil }
        var text = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.utf8.count % 4 != 0 { text += "=" }
        return Data(base64Encoded: text)
    }
}
