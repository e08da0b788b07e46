import Foundation
import Hummingbird
import ServiceLifecycle
import RescindServiceSupport

/// `GET /v1/events`: the live event stream as Server-Sent Events, optionally for one
/// family member (`?family_member_id=`). A client resumes with `Last-Event-ID` (or
/// `?after=`, e.g. a snapshot's `stream_position`) and first receives what it missed.
struct EventStreamController {
    let hub: EventStreamHub

    func addRoutes(to router: Router<BasicRequestContext>) {
        router.get("v1/events") { request, _ in
            let familyMemberID = try request.uri.queryParameters["family_member_id"].map { text in
                guard let id = UUID(uuidString: String(text)) else { throw APIError.badRequest("family_member_id must be a UUID") }
                return id
            }
            let lastEventID = request.headers.first { $0.name.canonicalName == "last-event-id" }?.value
            let resumeFrom = lastEventID.flatMap { Int64($0) }
                ?? request.uri.queryParameters["after"].flatMap { Int64(String($0)) }
            // Subscribe before replaying, so nothing committed in between is missed;
            // replayed events that also arrive live are skipped by id.
            let live = hub.subscribe(familyMemberID: familyMemberID)
            let hub = self.hub
            return Response(
                status: .ok,
                headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"],
                body: ResponseBody { writer in
                    var last = resumeFrom ?? 0
                    try await writer.write(ByteBuffer(string: "retry: 2000\n: connected\n\n"))
                    if let resumeFrom {
                        var batch = try await hub.replay(after: resumeFrom, familyMemberID: familyMemberID)
                        while !batch.isEmpty {
                            for event in batch { try await writer.write(ByteBuffer(string: event.serverSentEvent)) }
                            last = batch.last!.id
                            batch = batch.count < 1000 ? [] : try await hub.replay(after: last, familyMemberID: familyMemberID)
                        }
                    }
                    for await item in live.cancelOnGracefulShutdown() {
                        switch item {
                        case .event(let event) where event.id > last:
                            try await writer.write(ByteBuffer(string: event.serverSentEvent))
                            last = event.id
                        case .event:
                            continue
                        case .heartbeat:
                            try await writer.write(ByteBuffer(string: ": heartbeat\n\n"))
                        }
                    }
                    try await writer.finish(nil)
                })
        }
    }
}
