import Foundation

/// The source address a per-address limit counts: the peer of the connection, or, when the
/// peer is a trusted reverse proxy, the last address of its `X-Forwarded-For` (the one that
/// proxy appended; anything before it the client may have written itself).
///
/// IPv6 sources are counted per /64 (one host usually holds a whole /64, so per address
/// would give it 2^64 budgets); IPv4-mapped IPv6 addresses count as their IPv4 address.
public enum ClientAddress {
    /// The limit key of a request arriving from `peer` (the connection's IP address).
    public static func key(peer: String?, forwardedFor: String?, trustedProxies: Set<String>) -> String {
        let peerAddress = peer.flatMap(normalized) ?? "unknown"
        if trustedProxies.contains(peerAddress), let forwardedFor,
            let last = forwardedFor.split(separator: ",").last.map({ $0.trimmingCharacters(in: .whitespaces) }),
            let client = normalized(last)
        {
            return limitKey(client)
        }
        return limitKey(peerAddress)
    }

    /// The canonical text of an IPv4 or IPv6 address, nil when `text` is neither.
    public static func normalized(_ text: String) -> String? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return format(AF_INET, &v4, length: INET_ADDRSTRLEN) }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: v6) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xff, bytes[11] == 0xff {
            return bytes[12...].map { String($0) }.joined(separator: ".")
        }
        return format(AF_INET6, &v6, length: INET6_ADDRSTRLEN)
    }

    static func limitKey(_ address: String) -> String {
        var v6 = in6_addr()
        guard address.contains(":"), inet_pton(AF_INET6, address, &v6) == 1 else { return address }
        withUnsafeMutableBytes(of: &v6) { bytes in
            for index in 8..<16 { bytes[index] = 0 }
        }
        return (format(AF_INET6, &v6, length: INET6_ADDRSTRLEN) ?? address) + "/64"
    }

    private static func format<Address>(_ family: Int32, _ address: inout Address, length: Int32) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(length))
        let formatted = withUnsafeBytes(of: &address) { bytes in
            inet_ntop(family, bytes.baseAddress, &buffer, socklen_t(length)) != nil
        }
        guard formatted else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
