import Foundation
import RescindMacros
import Testing

/// `@MemberwiseInit` as its users meet it: the `init` it writes, used. (A test target that
/// depends on the macro plugin itself makes SwiftPM build every test for the host, where the
/// executables' modules cannot be imported; the wire types' public `init`s, used from other
/// modules' tests, show the access level.)
@Suite struct MemberwiseInitTests {
    @MemberwiseInit
    struct Grant: Equatable {
        static let schema = "x"
        let format = "v1"
        var grantID: UUID
        /// Documented, and written on two lines.
        let fmkVersion:
            Int
        var revokedAt: Date? = nil
        var count: Int = 0 {
            didSet { changes += 1 }
        }
        var changes: Int = 0
        var isActive: Bool { revokedAt == nil }
    }

    @Test func everyStoredPropertyIsAParameterInDeclarationOrder() {
        let id = UUID()
        let grant = Grant(grantID: id, fmkVersion: 3, revokedAt: .distantPast, count: 2, changes: 5)
        #expect(grant.grantID == id && grant.fmkVersion == 3 && grant.revokedAt == .distantPast)
        #expect(grant.count == 2 && grant.changes == 5, "the init sets a property, it does not observe it")
        #expect(grant.format == "v1" && !grant.isActive)
    }

    @Test func anInitialValueIsTheParametersDefault() {
        let grant = Grant(grantID: UUID(), fmkVersion: 1)
        #expect(grant.revokedAt == nil && grant.count == 0 && grant.changes == 0 && grant.isActive)
    }
}
