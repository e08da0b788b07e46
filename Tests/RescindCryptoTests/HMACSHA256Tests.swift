import Foundation
import Testing

@testable import RescindCrypto

@Suite("HMAC-SHA256 and the FMK commitment")
struct HMACSHA256Tests {
    /// RFC 4231 section 4, test cases 1, 2, 3, 4, 6 and 7 (HMAC-SHA-256; 5 is truncated output).
    static let vectors: [(key: [UInt8], data: [UInt8], tag: String)] = [
        (Array(repeating: 0x0b, count: 20), Array("Hi There".utf8),
         "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        (Array("Jefe".utf8), Array("what do ya want for nothing?".utf8),
         "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        (Array(repeating: 0xaa, count: 20), Array(repeating: 0xdd, count: 50),
         "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
        (Array(0x01...0x19), Array(repeating: 0xcd, count: 50),
         "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
        (Array(repeating: 0xaa, count: 131), Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
         "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
        (Array(repeating: 0xaa, count: 131),
         Array("This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm.".utf8),
         "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"),
    ]

    @Test func rfc4231() {
        for vector in Self.vectors {
            #expect(HMACSHA256.authenticate(vector.data, key: vector.key) == hex(vector.tag))
        }
    }

    @Test func commitmentBindsKeyFamilyMemberAndVersion() throws {
        let fmk = SecretKey()
        let id = UUID()
        let commitment = FMKCommitment.commit(fmk, familyMemberID: id, version: 3)
        #expect(commitment.count == 32)
        #expect(FMKCommitment.matches(commitment, fmk: fmk, familyMemberID: id, version: 3))
        #expect(!FMKCommitment.matches(commitment, fmk: SecretKey(), familyMemberID: id, version: 3))
        #expect(!FMKCommitment.matches(commitment, fmk: fmk, familyMemberID: UUID(), version: 3))
        #expect(!FMKCommitment.matches(commitment, fmk: fmk, familyMemberID: id, version: 4))
        #expect(!FMKCommitment.matches(Array(commitment.dropLast()), fmk: fmk, familyMemberID: id, version: 3))
        // The message layout the statement's documentation promises.
        #expect(FMKCommitment.message(familyMemberID: id, version: 0x0102_0304).suffix(4) == [1, 2, 3, 4])
        var raw = [UInt8](repeating: 7, count: 32)
        let known = try SecretKey(bytes: &raw)
        let expected = HMACSHA256.authenticate(
            Array("rescind.fmk_commitment.v1".utf8) + withUnsafeBytes(of: id.uuid) { Array($0) } + [0, 0, 0, 1],
            key: [UInt8](repeating: 7, count: 32))
        #expect(FMKCommitment.commit(known, familyMemberID: id, version: 1) == expected)
    }
}
