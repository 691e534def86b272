import Crypto
import Foundation
import SwiftASN1
import X509

/// A self-signed P-256 certificate for 127.0.0.1 and localhost, made when the fake starts and
/// valid for a day.
struct SelfSignedIdentity {
    var certificateDER: [UInt8]
    var certificatePEM: String
    var privateKeyDER: [UInt8]

    static func make() throws -> SelfSignedIdentity {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName {
            CommonName("EngagementEngine fake APNs")
            OrganizationName("EngagementEngine tests")
        }
        let now = Date()
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(key.publicKey), notValidBefore: now - 3600,
            notValidAfter: now + 86_400, issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(digitalSignature: true, keyCertSign: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([
                    .dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])),
                ])
            },
            issuerPrivateKey: Certificate.PrivateKey(key))
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return SelfSignedIdentity(
            certificateDER: serializer.serializedBytes, certificatePEM: try certificate.serializeAsPEM().pemString,
            privateKeyDER: Array(key.derRepresentation))
    }
}
