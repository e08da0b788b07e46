import Testing
@testable import RescindCrypto
@Test func placeholder() { #expect(Bool(true)) }
