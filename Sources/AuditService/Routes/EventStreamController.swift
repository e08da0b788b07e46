import Foundation
import Hummingbird
import RescindPostgres
import ServiceLifecycle
import RescindServiceSupport

/// `GET /v1/events`: the live event stream as Server-Sent Events, for the operator (every
/// event) or an owner (the family members they own), optionally for one family member
/// (`?family_member_id=`). A client resumes with `Last-Event-ID` (or `?after=`, e.g. a
/// snapshot's `stream_position`) and first receives what it missed. At most
/// `slots.capacity` streams are open at once (503 `too_many_streams` beyond).
struct EventStreamController {
    let hub: EventStreamHub
    let authorization: MonitoringAuthorization
    let slots: StreamSlots
    let pool: PostgresConnectionPool

    func addRoutes(to router: Router<BasicRequestContext>) {
        router.get("v1/events") { request, context in
            let scope = try await authorization.scope(of: request, logger: context.logger)
            let familyMemberID = try MonitoringController.uuid(request, "family_member_id")
            if let familyMemberID {
                try await pool.withConnection { try await scope.requireAccess(to: familyMemberID, on: $0) }
            }
            let lastEventID = request.headers.first { $0.name.canonicalName == "last-event-id" }?.value
            let resumeFrom = try lastEventID.map { text in
                guard let id = Int64(text.trimmingCharacters(in: .whitespaces)), id >= 0 else {
                    throw APIError.badRequest("Last-Event-ID must be a non-negative integer")
                }
                return id
            } ?? request.uri.queryParameters["after"].map { text in
                guard let id = Int64(String(text)), id >= 0 else { throw APIError.badRequest("after must be a non-negative integer") }
                return id
            }
            guard let lease = slots.acquire() else { throw APIError.tooManyStreams }
            let filter = EventStreamHub.Filter(familyMemberID: familyMemberID, ownerUserID: scope.ownerUserID)
            // Subscribe before replaying, so nothing committed in between is missed;
            // replayed events that also arrive live are skipped by id.
            let live = hub.subscribe(filter)
            let hub = self.hub
            return Response(
                status: .ok,
                headers: [.contentType: "text/event-stream", .cacheControl: "no-store"],
                body: ResponseBody { writer in
                    var last = resumeFrom ?? 0
                    try await writer.write(ByteBuffer(string: "retry: 2000\n: connected\n\n"))
                    if let resumeFrom {
                        var batch = try await hub.replay(after: resumeFrom, filter: filter)
                        while !batch.isEmpty {
                            for event in batch { try await writer.write(ByteBuffer(string: event.serverSentEvent)) }
                            last = batch.last!.id
                            batch = batch.count < 1000 ? [] : try await hub.replay(after: last, filter: filter)
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
                    // The closure holds the slot for as long as the response lives.
                    withExtendedLifetime(lease) {}
                    try await writer.finish(nil)
                })
        }
    }
}
