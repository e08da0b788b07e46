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

    /// A service's metrics port: unset keeps `/metrics` on the main port; a number the main
    /// port already has is refused at start, naming both variables.
    @Test func metricsPortsAreOptionalAndNeverTheMainPort() throws {
        var reader = EnvironmentReader(["METRICS": "9090", "ANY": "0", "SAME": "8080", "HIGH": "70000"])
        #expect(try reader.metricsPort("METRICS", mainPort: 8080, mainVariable: "PORT") == 9090)
        #expect(try reader.metricsPort("ANY", mainPort: 0, mainVariable: "PORT") == 0)
        #expect(try reader.metricsPort("UNSET", mainPort: 8080, mainVariable: "PORT") == nil)
        let same = #expect(throws: ConfigurationError.self) { try reader.metricsPort("SAME", mainPort: 8080, mainVariable: "PORT") }
        #expect(same?.description == "SAME: must differ from PORT")
        #expect(throws: ConfigurationError.self) { try reader.metricsPort("HIGH", mainPort: 8080, mainVariable: "PORT") }
        #expect(reader.namesRead == ["METRICS", "ANY", "UNSET", "SAME", "HIGH"])
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
