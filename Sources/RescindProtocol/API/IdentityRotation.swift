import Foundation

extension IdentityRotationStatement {
    /// What both identity keys sign: the statement, canonically encoded, under its own domain label.
    public func signingInput() throws -> [UInt8] {
        Array("rescind-identity-rotation-v1\n".utf8) + [UInt8](try CanonicalJSON.encode(self))
    }
}
