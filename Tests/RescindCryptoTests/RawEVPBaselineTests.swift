import Foundation
import Testing

@_spi(DevKit) @testable import RescindCrypto

/// The benchmark's raw loop must do the real work: open (verifying the tag and the old
/// associated data) and seal. Not a timing test.
@Suite("Raw EVP re-encryption baseline")
struct RawEVPBaselineTests {
    static func requests(_ count: Int, key: SecretKey) throws -> [AESGCM.ResealRequest] {
        try AESGCMResealTests.records(count, key: key, version: 1).map { record in
            AESGCM.ResealRequest(
                box: record.box, oldAssociatedData: RecordAssociatedData.make(recordID: record.id, fmkVersion: 1),
                newAssociatedData: RecordAssociatedData.make(recordID: record.id, fmkVersion: 2))
        }
    }

    @Test func resealsEveryRecordThatOpensUnderTheOldKey() throws {
        let oldKey = SecretKey()
        let requests = try Self.requests(100, key: oldKey)
        let first = try RawEVPBaseline.reseal(requests, in: requests.indices, from: oldKey, to: SecretKey())
        let second = try RawEVPBaseline.reseal(requests, in: requests.indices, from: oldKey, to: SecretKey())
        // Fresh keys and nonces: the produced tags differ between passes.
        #expect(first != second)
    }

    @Test func refusesARecordUnderTheWrongKeyOrBinding() throws {
        let oldKey = SecretKey()
        var requests = try Self.requests(10, key: oldKey)
        expectCryptoError(.authenticationFailed) {
            try RawEVPBaseline.reseal(requests, in: requests.indices, from: SecretKey(), to: SecretKey())
        }
        requests[7].oldAssociatedData = RecordAssociatedData.make(recordID: UUID(), fmkVersion: 1)
        let error = #expect(throws: CryptoError.self) {
            try RawEVPBaseline.reseal(requests, in: requests.indices, from: oldKey, to: SecretKey())
        }
        #expect(error?.code == .authenticationFailed)
        #expect(error?.itemIndex == 7)
        #expect(try RawEVPBaseline.reseal(requests, in: 0..<7, from: oldKey, to: SecretKey()) != 0)
    }
}
