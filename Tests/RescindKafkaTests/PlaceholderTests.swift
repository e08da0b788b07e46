import Testing
@testable import RescindKafka
@Test func placeholder() { #expect(Bool(true)) }
