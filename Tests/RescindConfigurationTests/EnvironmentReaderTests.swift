import Testing

@testable import RescindConfiguration

@Suite struct EnvironmentReaderTests {
    @Test func unsetAndEmptyVariablesKeepDefaults() throws {
        var reader = EnvironmentReader(["EMPTY": "  "])
        #expect(reader.string("UNSET", default: "d") == "d")
        #expect(try reader.int("EMPTY", default: 7, range: 0...10) == 7)
        #expect(reader.namesRead == ["UNSET", "EMPTY"])
    }

    @Test func parsesTypedValues() throws {
        var reader = EnvironmentReader(["PORT": " 8081 ", "FLAG": "off", "TTL": "30", "SCHEMA": "grant_2"])
        #expect(try reader.int("PORT", default: 0, range: 0...65_535) == 8081)
        #expect(try reader.bool("FLAG", default: true) == false)
        #expect(try reader.seconds("TTL", default: .seconds(1)) == .seconds(30))
        #expect(try reader.identifier("SCHEMA", default: "x") == "grant_2")
        #expect(reader.namesRead == ["PORT", "FLAG", "TTL", "SCHEMA"])
    }

    @Test func optionalIntegersAreNilWhenUnsetAndCheckedWhenSet() throws {
        var reader = EnvironmentReader(["WAIT": "25", "EMPTY": "", "HIGH": "10001"])
        #expect(try reader.optionalInt("WAIT", range: 0...10_000) == 25)
        #expect(try reader.optionalInt("EMPTY", range: 0...10_000) == nil)
        #expect(try reader.optionalInt("UNSET", range: 0...10_000) == nil)
        let error = #expect(throws: ConfigurationError.self) { try reader.optionalInt("HIGH", range: 0...10_000) }
        #expect(error?.variable == "HIGH" && error?.description.contains("10001") == false)
        #expect(reader.namesRead == ["WAIT", "EMPTY", "UNSET", "HIGH"])
    }

    @Test func rejectsBadValuesNamingTheVariableButNotTheValue() {
        var reader = EnvironmentReader(["PORT": "99999", "FLAG": "maybe", "SCHEMA": "x; DROP TABLE", "TTL": "0"])
        #expect(throws: ConfigurationError.self) { try reader.int("PORT", default: 0, range: 0...65_535) }
        #expect(throws: ConfigurationError.self) { try reader.bool("FLAG", default: true) }
        #expect(throws: ConfigurationError.self) { try reader.seconds("TTL", default: .seconds(1)) }
        let error = #expect(throws: ConfigurationError.self) { try reader.identifier("SCHEMA", default: "x") }
        #expect(error?.variable == "SCHEMA")
        #expect(error?.description.contains("DROP") == false)
    }
}
