import Hummingbird
import RescindProtocol

extension Response {
    /// A JSON response in Rescind's conventions (sorted keys, RFC 3339 ms dates, base64 bytes).
    /// Used instead of conforming the shared API types to `ResponseEncodable` here.
    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let data = try CanonicalJSON.encode(value)
        return Response(
            status: status, headers: [.contentType: "application/json", .contentLength: String(data.count)],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
