import Testing
@testable import RescindPostgres
@Test func placeholder() { #expect(Bool(true)) }
