import Hummingbird

extension Request {
    /// The token of an `Authorization: Bearer …` header, if there is one of a sane size.
    var bearerToken: String? {
        guard let header = headers[.authorization], header.hasPrefix("Bearer "),
            case let token = String(header.dropFirst("Bearer ".count)), !token.isEmpty, token.utf8.count <= 512
        else { return nil }
        return token
    }
}
