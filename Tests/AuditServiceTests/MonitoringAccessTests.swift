import AuditService
import Foundation
import RescindProtocol
import RescindTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

#if canImport(Glibc)
import Glibc
#endif

/// Who may read the monitoring API and the event stream. The adversary: anyone who can
/// reach the audit service's port (compose publishes it) — with no token, a guessed one,
/// or a real grant-service token of another family's owner. The real audit service, real
/// PostgreSQL, an in-process broker and, for owners' tokens, the real grant service.
@Suite struct MonitoringAccessTests {
    static let dataRoutes = [
        "/v1/revocations", "/v1/revocations/\(UUID())", "/v1/rejections", "/v1/events", "/v1/monitoring/credential",
    ]

    static func errorCode(_ body: Data) -> String? {
        try? CanonicalJSON.decode(APIErrorBody.self, from: body).error.code
    }

    /// The family member a stream event is about (every payload names it, if any).
    static func familyMember(of event: EventStreamClient.Event) -> UUID? {
        let object = try? JSONSerialization.jsonObject(with: Data(event.data.utf8)) as? [String: Any]
        return (object?["family_member_id"] as? String).flatMap(UUID.init(uuidString:))
    }

    /// The `rescind_audit_event_streams` gauge.
    static func openStreams(_ bed: AuditTestBed) async throws -> Int? {
        let metrics = String(decoding: try await bed.get("/metrics").body, as: UTF8.self)
        let line = metrics.split(separator: "\n").first { $0.hasPrefix("rescind_audit_event_streams ") }
        return line.flatMap { Double($0.split(separator: " ").last!) }.map { Int($0) }
    }

    @Test func everyMonitoringRouteRefusesAMissingOrWrongCredential() async throws {
        try await AuditTestBed.with { bed in
            for route in Self.dataRoutes {
                for token in [nil, "wrong-" + String(repeating: "0", count: 40), bed.operatorToken + "x", ""] {
                    let answer = try await bed.get(route, token: token)
                    #expect(answer.status == 401, "\(route) with \(token == nil ? "no token" : "a wrong token")")
                    #expect(Self.errorCode(answer.body) == "unauthenticated", "\(route)")
                }
                // The operator token in another scheme is not a bearer credential.
                let basic = try await TestHTTP.send(
                    "GET", URL(string: route, relativeTo: bed.service.baseURL)!.absoluteURL,
                    headers: [("Authorization", "Basic \(bed.operatorToken)")])
                #expect(basic.status == 401, "\(route) with Basic")
            }
            // Operations and the page itself (which holds no data) stay open.
            for route in ["/health", "/ready", "/metrics", "/", "/monitor", "/monitor.js", "/v1/service-key"] {
                #expect(try await bed.get(route).status == 200, "\(route)")
            }
            let operatorView = try await bed.get("/v1/monitoring/credential", token: bed.operatorToken)
            #expect(operatorView.status == 200)
            #expect(String(decoding: operatorView.body, as: UTF8.self) == #"{"scope":"operator"}"#)
            let metrics = String(decoding: try await bed.get("/metrics").body, as: UTF8.self)
            #expect(metrics.contains("rescind_audit_monitoring_unauthenticated_total \(Self.dataRoutes.count * 5)"), "\(metrics)")
        }
    }

    @Test func theServiceRefusesToStartWithAnUnusableTokenFile() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rescind-token-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func file(_ name: String, _ contents: String, mode: Int) -> String {
            let path = directory.appendingPathComponent(name).path
            #expect(FileManager.default.createFile(atPath: path, contents: Data(contents.utf8), attributes: [.posixPermissions: mode]))
            return path
        }
        let secret = "s3cret-" + String(repeating: "k", count: 40)
        let cases = [
            (directory.appendingPathComponent("missing").path, "does not exist"),
            (file("short", "tooshort\n", mode: 0o600), "fewer than 32 characters"),
            (file("open", secret, mode: 0o644), "is open to other users (mode 0644)"),
            (file("spaces", secret + " and more", mode: 0o600), "printable ASCII"),
        ]
        for (path, problem) in cases {
            var environment = [
                "RESCIND_GRANT_SERVICE_PUBLIC_KEY": Data(repeating: 1, count: 32).base64EncodedString(),
                "RESCIND_AUDIT_OPERATOR_TOKEN_FILE": path,
                "RESCIND_DATABASE_URL": "postgres://nobody@127.0.0.1:1/none",
            ]
            environment["RESCIND_AUDIT_SIGNING_KEY_FILE"] = directory.appendingPathComponent("audit.key").path
            environment["RESCIND_AUDIT_CREATE_SIGNING_KEY"] = "true"
            let configuration = try AuditServiceConfiguration(environment: environment)
            let error = await #expect(throws: (any Error).self) {
                _ = try await AuditServiceApplication.build(configuration: configuration, logger: AuditServiceHarness.logger)
            }
            let text = "\(error.map { "\($0)" } ?? "")"
            #expect(text.contains("RESCIND_AUDIT_OPERATOR_TOKEN_FILE") && text.contains(problem), "\(text)")
            #expect(!text.contains(secret) && !text.contains("s3cret"), "the token never appears in an error")
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func anOwnerSeesOnlyTheFamilyMembersTheyOwn() async throws {
        try await GrantServiceHarness.with { grant in
            let adultA = try await EndToEndTests.member("Adult A", on: grant)
            let adultB = try await EndToEndTests.member("Adult B", on: grant)
            let tokenA = try await EndToEndTests.token(adultA, grant: grant)
            let tokenB = try await EndToEndTests.token(adultB, grant: grant)
            try await AuditTestBed.with({ $0.grantService.url = grant.baseURL.absoluteString }) { bed in
                let emma = TestFamily(ownerUserID: adultA.userID), noah = TestFamily(ownerUserID: adultB.userID)
                let phone = TestFamily.Device(userID: UUID()), tablet = TestFamily.Device(userID: UUID())
                try await bed.publish(emma.accessEvent(.familyMemberCreated))
                try await bed.publish(noah.accessEvent(.familyMemberCreated))
                let emmaRevocation = emma.revocation(of: phone.userID, devices: [phone])
                let noahRevocation = noah.revocation(of: tablet.userID, devices: [tablet])
                try await bed.publish(emmaRevocation)
                try await bed.publish(noahRevocation)
                try await bed.eventually("both tracked") {
                    let emmaDevices = try await bed.deviceStates(emmaRevocation.eventID).count
                    let noahDevices = try await bed.deviceStates(noahRevocation.eventID).count
                    return emmaDevices == 1 && noahDevices == 1
                }

                func revocations(_ token: String, _ query: String = "") async throws -> (Int, [UUID]) {
                    let answer = try await bed.get("/v1/revocations" + query, token: token)
                    guard answer.status == 200 else { return (answer.status, []) }
                    return (200, try CanonicalJSON.decode(RevocationStatusList.self, from: answer.body).revocations.map(\.eventID))
                }
                // A token the grant service does not know is refused like no token at all.
                for route in Self.dataRoutes {
                    let guessed = try await bed.get(route, token: "guessed-token-" + UUID().uuidString)
                    #expect(guessed.status == 401 && Self.errorCode(guessed.body) == "unauthenticated", "\(route)")
                }
                // The operator sees both families.
                #expect(Set(try await revocations(bed.operatorToken).1) == [emmaRevocation.eventID, noahRevocation.eventID])
                #expect(try await bed.get("/v1/revocations/\(noahRevocation.eventID)", token: bed.operatorToken).status == 200)
                #expect(try await bed.get("/v1/rejections", token: bed.operatorToken).status == 200)

                // A sees Emma's revocation only; Noah's is invisible, even asked for directly.
                let credential = try JSONSerialization.jsonObject(
                    with: try await bed.get("/v1/monitoring/credential", token: tokenA).body) as? [String: String]
                #expect(credential?["scope"] == "owner")
                #expect(credential?["user_id"].flatMap(UUID.init(uuidString:)) == adultA.userID)
                #expect(try await revocations(tokenA).1 == [emmaRevocation.eventID])
                #expect(try await revocations(tokenB).1 == [noahRevocation.eventID])
                #expect(try await bed.get("/v1/revocations/\(emmaRevocation.eventID)", token: tokenA).status == 200)
                let direct = try await bed.get("/v1/revocations/\(noahRevocation.eventID)", token: tokenA)
                #expect(direct.status == 404 && Self.errorCode(direct.body) == "not_found")
                let filtered = try await bed.get("/v1/revocations?family_member_id=\(noah.familyMemberID)", token: tokenA)
                #expect(filtered.status == 403 && Self.errorCode(filtered.body) == "forbidden")
                #expect(try await revocations(tokenA, "?family_member_id=\(emma.familyMemberID)").1 == [emmaRevocation.eventID])
                #expect(try await bed.get("/v1/revocations?family_member_id=\(UUID())", token: tokenA).status == 404)
                // Rejected messages may come from anyone's devices: operator only.
                let rejections = try await bed.get("/v1/rejections", token: tokenA)
                #expect(rejections.status == 403 && Self.errorCode(rejections.body) == "forbidden")
                let otherStream = try await bed.get("/v1/events?family_member_id=\(noah.familyMemberID)", token: tokenA)
                #expect(otherStream.status == 403)

                // A's stream, replayed from the start: Emma's events only. A last event for Emma
                // (after one for Noah) marks the end of what there is to see.
                try await bed.publish(TestFamily.ack(tablet, for: noahRevocation), signedBy: tablet.key)
                try await bed.eventually("Noah's revocation complete") {
                    try await bed.deviceStates(noahRevocation.eventID)[tablet.id] == "applied"
                }
                let marker = emma.accessEvent(.accessGranted, target: UUID())
                try await bed.publish(marker)
                let streamA = EventStreamClient(url: bed.service.baseURL.appendingPathComponent("v1/events"), token: tokenA, lastEventID: 0)
                defer { streamA.close() }
                var seen: [EventStreamClient.Event] = []
                while true {
                    let event = try await streamA.next(1)[0]
                    seen.append(event)
                    if event.type == "access_event", try event.decoded(AccessEvent.self).eventID == marker.eventID { break }
                }
                #expect(seen.count >= 3, "created, the revocation, the grant")
                #expect(seen.allSatisfy { Self.familyMember(of: $0) == emma.familyMemberID }, "\(seen)")
                // The operator's replay holds Noah's events as well.
                let streamOperator = EventStreamClient(
                    url: bed.service.baseURL.appendingPathComponent("v1/events"), token: bed.operatorToken, lastEventID: 0)
                defer { streamOperator.close() }
                var operatorSeen: Set<UUID> = []
                while operatorSeen != [emma.familyMemberID, noah.familyMemberID] {
                    if let id = Self.familyMember(of: try await streamOperator.next(1)[0]) { operatorSeen.insert(id) }
                }

                // Live: a new event for Noah reaches B's stream and not A's; the next for Emma reaches A's.
                let liveB = EventStreamClient(url: bed.service.baseURL.appendingPathComponent("v1/events"), token: tokenB)
                defer { liveB.close() }
                try await bed.eventually("three streams open") { try await Self.openStreams(bed) == 3 }
                let noahGrant = noah.accessEvent(.accessGranted, target: UUID())
                try await bed.publish(noahGrant)
                let emmaGrant = emma.accessEvent(.accessGranted, target: UUID())
                try await bed.publish(emmaGrant)
                let toB = try await liveB.next(1, type: "access_event")[0]
                #expect(try toB.decoded(AccessEvent.self).eventID == noahGrant.eventID)
                let toA = try await streamA.next(1)[0]
                #expect(try toA.decoded(AccessEvent.self).eventID == emmaGrant.eventID, "A's next event is Emma's, not Noah's")

                // Scope follows ownership: once Emma is transferred to B, her revocation is B's to see.
                let newOwner = TestFamily(familyMemberID: emma.familyMemberID, ownerUserID: adultB.userID)
                try await bed.publish(newOwner.accessEvent(.ownershipTransferred, target: adultB.userID, at: Date().addingTimeInterval(1)))
                try await bed.eventually("the transfer applied") {
                    try await revocations(tokenB).1.count == 2
                }
                #expect(try await revocations(tokenA).1.isEmpty)
                #expect(try await bed.get("/v1/revocations/\(emmaRevocation.eventID)", token: tokenA).status == 404)
                #expect(try await bed.get("/v1/revocations?family_member_id=\(emma.familyMemberID)", token: tokenA).status == 403)
            }
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func streamsAreCappedFreedWhenClosedAndResumeAfterTheLastEventID() async throws {
        try await AuditTestBed.with({
            $0.monitoring.maxStreams = 2
            $0.monitoring.streamHeartbeat = .milliseconds(200)
        }) { bed in
            let emma = TestFamily()
            var events: [AccessEvent] = []
            for _ in 0..<4 {
                events.append(emma.accessEvent(.accessGranted, target: UUID()))
                try await bed.publish(events.last!)
            }
            try await bed.eventually("four stream events") {
                try await bed.count("SELECT count(*) FROM stream_events") == 4
            }
            func gauge(_ value: Int) async throws {
                try await bed.eventually("\(value) open stream(s)") { try await Self.openStreams(bed) == value }
            }
            let url = bed.service.baseURL.appendingPathComponent("v1/events")

            // Resume: after id n comes exactly what followed n, in order.
            let all = EventStreamClient(url: url, token: bed.operatorToken, lastEventID: 0)
            let everything = try await all.next(4)
            let ids = everything.compactMap(\.id)
            #expect(ids.count == 4 && ids == ids.sorted())
            let resumed = EventStreamClient(url: url, token: bed.operatorToken, lastEventID: ids[1])
            let rest = try await resumed.next(2)
            #expect(rest.map(\.id) == [ids[2], ids[3]])
            #expect(try rest.map { try $0.decoded(AccessEvent.self).eventID } == events[2...].map(\.eventID))
            try await gauge(2)

            // A third stream is refused while two are open, with the JSON error shape.
            let refused = try await bed.get("/v1/events", token: bed.operatorToken)
            #expect(refused.status == 503 && Self.errorCode(refused.body) == "too_many_streams")
            #expect(String(decoding: try await bed.get("/metrics").body, as: UTF8.self)
                .contains("rescind_audit_event_streams_refused_total 1"))
            // A malformed Last-Event-ID is a 400, and takes no slot.
            let malformed = try await TestHTTP.send(
                "GET", url, headers: [("Authorization", "Bearer \(bed.operatorToken)"), ("Last-Event-ID", "not-a-number")])
            #expect(malformed.status == 400)

            // A client that goes away gives its slot back (noticed at the next heartbeat).
            resumed.close()
            try await gauge(1)
            let again = EventStreamClient(url: url, token: bed.operatorToken, lastEventID: ids[2])
            defer { again.close() }
            #expect(try await again.next(1).map(\.id) == [ids[3]])
            try await gauge(2)
            all.close()
            try await gauge(1)
        }
    }

    /// The adversary: a client that opens a stream and then takes nothing (a stalled or
    /// malicious reader). Its connection is closed once the socket and NIO's buffer stay full
    /// for the stalled-reader timeout, and its slot is freed.
    @Test(.timeLimit(.minutes(2)))
    func aStalledStreamReaderIsDisconnectedAndItsSlotFreed() async throws {
        // Plain HTTP: the raw socket below speaks HTTP itself (stalling is the same under TLS).
        try await AuditTestBed.with(plainHTTP: true, {
            $0.monitoring.stalledReaderTimeout = .milliseconds(500)
            $0.monitoring.streamHeartbeat = .milliseconds(200)
        }) { bed in
            let socket = try await Self.openStalledStream(bed)
            defer { close(socket) }
            try await bed.eventually("the stream open") { try await Self.openStreams(bed) == 1 }
            try await bed.eventually("the stalled reader disconnected", timeout: .seconds(60)) {
                String(decoding: try await bed.get("/metrics").body, as: UTF8.self)
                    .contains("rescind_audit_stalled_readers_closed_total 1")
            }
            try await bed.eventually("its slot freed") { try await Self.openStreams(bed) == 0 }
        }
    }

    /// The adversary again, on the live side: the reader stalls while new events keep
    /// coming. Its buffer (10 events here) does not grow: the stream is ended, and the
    /// slot is freed when the client goes.
    @Test(.timeLimit(.minutes(2)))
    func aStreamWhoseReaderFallsAWholeBufferBehindIsEnded() async throws {
        try await AuditTestBed.with(plainHTTP: true, {
            $0.monitoring.streamBufferEvents = 10
            $0.monitoring.stalledReaderTimeout = .seconds(3600)
        }) { bed in
            let socket = try await Self.openStalledStream(bed)
            try await bed.eventually("the stream open") { try await Self.openStreams(bed) == 1 }
            try await bed.withConnection { connection in
                try await connection.execute(
                    """
                    INSERT INTO stream_events (family_member_id, type, data)
                    SELECT NULL, 'notification', jsonb_build_object('n', n) FROM generate_series(1, 50) AS n
                    """)
                try await connection.execute("SELECT pg_notify('rescind_audit_stream', '')")
            }
            try await bed.eventually("the slow stream ended") {
                String(decoding: try await bed.get("/metrics").body, as: UTF8.self)
                    .contains("rescind_audit_event_streams_slow_ended_total 1")
            }
            close(socket)
            try await bed.eventually("its slot freed") { try await Self.openStreams(bed) == 0 }
        }
    }

    /// A raw connection that asks for the whole history (32 MiB, more than loopback socket
    /// buffers hold) with the operator token, then reads nothing.
    static func openStalledStream(_ bed: AuditTestBed) async throws -> Int32 {
        try await bed.withConnection { connection in
            try await connection.execute(
                """
                INSERT INTO stream_events (family_member_id, type, data)
                SELECT NULL, 'notification', jsonb_build_object('padding', repeat('x', 65536))
                FROM generate_series(1, 512)
                """)
        }
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(socket >= 0)
        var small: Int32 = 4096
        _ = setsockopt(socket, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(bed.service.baseURL.port!).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        let request = Array(
            "GET /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(bed.operatorToken)\r\nLast-Event-ID: 0\r\n\r\n".utf8)
        guard connected == 0, request.withUnsafeBytes({ send(socket, $0.baseAddress, $0.count, 0) }) == request.count else {
            close(socket)
            throw HarnessError.timedOut("connecting a raw stream client")
        }
        return socket
    }
}
