import Foundation
import Hummingbird
import RescindProtocol
import RescindServiceSupport

/// Content negotiation for the bulk record bodies: binary (`BinaryRecords`) when the
/// client asks for it, JSON otherwise.
enum BinaryRecordsCoding {
    /// The upload batch in whichever form the request's `Content-Type` names.
    static func uploadBatch(from request: Request, context: GrantRequestContext) async throws -> UploadBatchRequest {
        guard request.headers[.contentType]?.hasPrefix(BinaryRecords.mediaType) == true else {
            return try await request.decode(as: UploadBatchRequest.self, context: context)
        }
        let body = try await request.collectBody(context: context)
        do {
            return try BinaryRecords.decodeUploadBatch(Data(buffer: body, byteTransferStrategy: .noCopy))
        } catch let error as BinaryRecords.FormatError {
            throw APIError.badRequest("malformed binary body: \(error)")
        }
    }

    /// The page in binary when the request's `Accept` names `BinaryRecords.mediaType`, else JSON.
    static func response(_ page: RecordPage, for request: Request, context: GrantRequestContext) throws -> Response {
        guard request.headers[.accept]?.contains(BinaryRecords.mediaType) == true else {
            return try context.responseEncoder.encode(page, from: request, context: context)
        }
        let body = BinaryRecords.encode(page)
        return Response(
            status: .ok,
            headers: [.contentType: BinaryRecords.mediaType, .contentLength: String(body.count)],
            body: .init(byteBuffer: ByteBuffer(data: body)))
    }
}
