import Foundation
import RescindProtocol
import Testing

/// The live event stream (SSE): state changes and notifications as they commit,
/// filtered by family member, resumable with Last-Event-ID.
@Suite struct EventStreamTests {
    @Test func theStreamDeliversFilteredEventsAndResumes() async throws {
        try await AuditTestBed.with { bed in
            let emma = TestFamily(), noah = TestFamily()
            let adultC = UUID()
            let phone = TestFamily.Device(userID: adultC)
            let all = EventStreamClient(url: bed.service.baseURL.appendingPathComponent("v1/events"), token: bed.operatorToken)
            let emmaOnly = EventStreamClient(
                url: URL(string: "v1/events?family_member_id=\(emma.familyMemberID)", relativeTo: bed.service.baseURL)!,
                token: bed.operatorToken)
            defer {
                all.close()
                emmaOnly.close()
            }
            // Both subscribed before anything is published (a live stream without Last-Event-ID
            // starts at its subscription).
            try await all.connected()
            try await emmaOnly.connected()

            try await bed.publish(noah.accessEvent(.familyMemberCreated))
            try await bed.publish(emma.accessEvent(.familyMemberCreated))
            let revocation = emma.revocation(of: adultC, devices: [phone])
            try await bed.publish(revocation)
            try await bed.eventually("tracked") { try await bed.deviceStates(revocation.eventID).count == 1 }
            try await bed.publish(TestFamily.ack(phone, for: revocation), signedBy: phone.key)

            // Emma's stream: her access event, the revocation pending, then applied, and the completion.
            let accessEvents = try await emmaOnly.next(1, type: "access_event")
            #expect(try accessEvents[0].decoded(AccessEvent.self).familyMemberID == emma.familyMemberID)
            let completed = try await emmaOnly.next(1, type: "notification")
            let notification = try completed[0].decoded(AuditNotification.self)
            #expect(notification.kind == .revocationCompleted)
            #expect(notification.eventID == revocation.eventID)

            // The unfiltered stream sees both family members, in commit order, with increasing ids.
            let everything = try await all.next(5)
            let ids = everything.compactMap(\.id)
            #expect(ids == ids.sorted() && Set(ids).count == 5)
            let accessFor = try everything.filter { $0.type == "access_event" }.map {
                try $0.decoded(AccessEvent.self).familyMemberID
            }
            #expect(Set(accessFor) == [emma.familyMemberID, noah.familyMemberID])
            let states = try everything.filter { $0.type == "revocation" }.map {
                try $0.decoded(RevocationStatus.self).devices.map(\.state)
            }
            #expect(states.last == ["applied"])

            // A client that lost its connection resumes after the last id it saw.
            let resumed = EventStreamClient(url: bed.service.baseURL.appendingPathComponent("v1/events"), token: bed.operatorToken, lastEventID: ids[1])
            defer { resumed.close() }
            let replayed = try await resumed.next(3)
            #expect(replayed.map(\.id) == Array(everything[2...]).map(\.id))
        }
    }
}
