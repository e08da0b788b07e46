import Testing

@testable import RescindCrypto

@Suite("Secure random bytes")
struct SecureRandomTests {
    @Test func producesTheRequestedCountOfFreshBytes() {
        #expect(SecureRandom.bytes(count: 0).isEmpty)
        let first = SecureRandom.bytes(count: 32)
        #expect(first.count == 32)
        #expect(first != SecureRandom.bytes(count: 32))
    }
}
