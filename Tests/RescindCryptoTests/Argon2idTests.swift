import Foundation
import Testing

@testable import RescindCrypto

/// Each derivation costs 64 MiB and a few tenths of a second: two in total.
@Suite("Argon2id master key")
struct Argon2idTests {
    /// phc-winner-argon2 reference vector (argon2id, v=19, t=2, m=2^16 KiB, p=1, "password",
    /// salt "somesalt"); raw hash 09316115…3cf7. Confirmed with argon2-cffi. The salt is 8
    /// bytes, which `crypto_pwhash` refuses, so it is checked through the encoded form.
    @Test func referenceVectorVerifies() {
        let encoded = "$argon2id$v=19$m=65536,t=2,p=1$c29tZXNhbHQ$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8ArZWb2GRPPc"
        #expect(Argon2id.verify(encoded: encoded, passphrase: Array("password".utf8)))
    }

    /// Production parameters (t=3, 64 MiB, p=1) with salt 00…0f, cross-computed with the
    /// reference implementation through argon2-cffi `hash_secret_raw(type=ID, version=19)`.
    @Test func productionParametersMatchTheReferenceImplementation() async throws {
        let parameters = Argon2id.Parameters(
            algorithm: Argon2id.Parameters.argon2id13,
            opsLimit: 3,
            memLimit: 67_108_864,
            salt: Array(0..<16)
        )
        let key = try await Argon2id.deriveKey(passphrase: "correct horse battery staple", parameters: parameters)
        #expect(key.testBytes == hex("0d1a3c6523c8f06e4e0af9c515aa5b5448cfebd6838f2d52c3d8b6ef8ddc3c2e"))
    }

    @Test func parametersRoundTripThroughJSON() throws {
        let parameters = Argon2id.Parameters.generate()
        #expect(parameters.algorithm == "argon2id13")
        #expect(parameters.opsLimit == 3)
        #expect(parameters.memLimit == 67_108_864)
        #expect(parameters.salt.count == 16)
        #expect(parameters.salt != Argon2id.Parameters.generate().salt)
        let json = try JSONEncoder().encode(parameters)
        #expect(try JSONDecoder().decode(Argon2id.Parameters.self, from: json) == parameters)
        let stored = #"{"algorithm":"argon2id13","opsLimit":3,"memLimit":67108864,"salt":"AAECAwQFBgcICQoLDA0ODw=="}"#
        let decoded = try JSONDecoder().decode(Argon2id.Parameters.self, from: Data(stored.utf8))
        #expect(decoded.salt == Array(0..<16))
    }

    @Test func refusesParametersItCannotHonour() {
        let valid = Argon2id.Parameters.generate()
        let refused = [
            Argon2id.Parameters(algorithm: "argon2i13", opsLimit: 3, memLimit: valid.memLimit, salt: valid.salt),
            Argon2id.Parameters(
                algorithm: valid.algorithm,
                opsLimit: 3,
                memLimit: valid.memLimit,
                salt: Array(valid.salt.prefix(8))
            ),
            Argon2id.Parameters(algorithm: valid.algorithm, opsLimit: 0, memLimit: valid.memLimit, salt: valid.salt),
            Argon2id.Parameters(algorithm: valid.algorithm, opsLimit: 3, memLimit: 1 << 40, salt: valid.salt),
        ]
        for parameters in refused {
            expectCryptoError(.unsupportedParameters) {
                try Argon2id.deriveKey(passphrase: "x", parameters: parameters)
            }
        }
    }
}
