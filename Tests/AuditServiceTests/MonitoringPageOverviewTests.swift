import Foundation
import RescindCrypto
import RescindProtocol
import Testing

/// The monitoring page's overview in headless Chromium: the counts per device
/// state, the plot of commit-to-last-ack times, overdue rows highlighted, each revocation's
/// exposure summary, and the filters by state and by family member (plain GET query parameters).
extension MonitoringPageTests {
    /// The counts as the page shows them: state → count.
    static let countsExpression = """
        JSON.stringify(Object.fromEntries([...document.querySelectorAll('#state-counts li[data-state]')]
          .map(item => [item.dataset.state, Number(item.dataset.count)])))
        """

    /// The listed rows: event id → [attention, erased, unacknowledged].
    static let overviewExpression = """
        JSON.stringify(Object.fromEntries([...document.querySelectorAll('#revocations tr[data-event-id]')]
          .map(row => [row.dataset.eventId, [row.dataset.attention, row.querySelector('.exposure').dataset.erased,
                                             row.querySelector('.exposure').dataset.unacknowledged]])))
        """

    static func decode<T: Decodable>(_ type: T.Type, _ text: String) -> T? {
        try? JSONDecoder().decode(type, from: Data(text.utf8))
    }

    @Test(.enabled(if: HeadlessChromium.executable != nil, "chromium is not installed: apt-get install -y chromium"))
    func thePageCountsPlotsHighlightsAndFilters() async throws {
        try await AuditTestBed.with { bed in
            let emma = TestFamily(), noah = TestFamily()
            let adultC = UUID()
            // Two completed revocations of Emma (2 min apart), one of Noah waiting, one of Emma overdue.
            var completed: [RevocationEvent] = []
            for (version, age) in [(2, 120.0), (3, 0.0)] {
                let phone = TestFamily.Device(userID: adultC), laptop = TestFamily.Device(userID: emma.ownerUserID)
                let revocation = emma.revocation(of: adultC, devices: [phone, laptop], version: version, at: Date(timeIntervalSinceNow: -age))
                try await bed.publish(revocation)
                try await bed.eventually("tracked") { try await bed.deviceStates(revocation.eventID).count == 2 }
                try await bed.publish(TestFamily.ack(phone, for: revocation), signedBy: phone.key)
                try await bed.publish(
                    TestFamily.ack(laptop, for: revocation, outcome: version == 2 ? .applied : .alreadyApplied), signedBy: laptop.key)
                completed.append(revocation)
            }
            let waiting = noah.revocation(of: adultC, devices: [TestFamily.Device(userID: adultC)])
            try await bed.publish(waiting)
            let stale = emma.revocation(
                of: adultC, devices: [TestFamily.Device(userID: adultC)], version: 4, at: Date(timeIntervalSinceNow: -3600))
            try await bed.publish(stale)
            try await bed.eventually("acknowledged and overdue") {
                let states = try await bed.deviceStates(stale.eventID)
                let done = try await bed.deviceStates(completed[1].eventID)
                let older = try await bed.deviceStates(completed[0].eventID)
                return states.values.first == "overdue" && done.values.allSatisfy { $0 != "pending" }
                    && older.values.allSatisfy { $0 != "pending" }
            }

            let browser = try await HeadlessChromium(url: bed.service.baseURL)
            defer { browser.quit() }
            _ = try await browser.waitFor("document.body.dataset.auth || ''", as: String.self) { $0 == "signed-out" }
            try await Self.signIn(browser, with: bed.operatorToken)
            _ = try await browser.waitFor("document.body.dataset.auth", as: String.self) { $0 == "signed-in" }

            // Counts per state, every state listed (zero too), overdue highlighted.
            let counts = try await browser.waitFor(Self.countsExpression, as: String.self) {
                Self.decode([String: Int].self, $0)?["overdue"] == 1
            }
            #expect(Self.decode([String: Int].self, counts) == [
                "pending": 1, "applied": 3, "already_applied": 1, "failed": 0, "overdue": 1,
                // The lifecycle's other states, listed at zero.
                "delivered": 0, "not_now": 0, "healed": 0, "reissued": 0, "expired": 0,
            ])
            #expect(try await browser.evaluate(
                "document.querySelector('#state-counts li[data-state=\"overdue\"]').classList.contains('attention')") as? Bool == true)
            #expect(try await browser.evaluate(
                "document.querySelector('#state-counts li[data-state=\"applied\"]').classList.contains('attention')") as? Bool == false)

            // The plot: inline SVG, one dot per completed revocation, labelled axes, p50 and p99.
            _ = try await browser.waitFor("document.querySelectorAll('#plot svg circle.point').length", as: Int.self) { $0 == 2 }
            let labels = try await browser.evaluate(
                "[...document.querySelectorAll('#plot svg text.axis-label')].map(t => t.textContent).join('|')") as? String
            #expect(labels == "commit → last ack (ms)|committed at (UTC)")
            #expect(try await browser.evaluate(
                "[...document.querySelectorAll('#plot svg text.percentile-label')].map(t => t.textContent.split(' ')[0]).join(',')")
                as? String == "p50,p99")
            #expect(try await browser.evaluate("document.querySelectorAll('#plot svg text.tick').length") as? Int == 4)
            let slow = try #require(try await browser.evaluate(
                "Math.max(...[...document.querySelectorAll('#plot svg circle.point')].map(c => Number(c.dataset.ms)))") as? Int)
            #expect(slow >= 119_000, "the revocation committed two minutes before its acks")
            let ackSummary = try await browser.evaluate("document.getElementById('ack-summary').textContent") as? String
            #expect(ackSummary?.hasPrefix("2 completed; p50 ") == true, "\(ackSummary ?? "")")
            // No external asset anywhere on the page.
            #expect(try await browser.evaluate(
                "performance.getEntriesByType('resource').every(r => r.name.startsWith(location.origin))") as? Bool == true)

            // Rows: the overdue one highlighted, each with its exposure summary.
            let overview = try await browser.waitFor(Self.overviewExpression, as: String.self) {
                Self.decode([String: [String]].self, $0)?.count == 4
            }
            let rows = try #require(Self.decode([String: [String]].self, overview))
            #expect(rows[stale.eventID.uuidString] == ["true", "0", "1"])
            #expect(rows[completed[0].eventID.uuidString] == ["false", "1", "0"])
            #expect(rows[completed[1].eventID.uuidString] == ["false", "1", "0"])
            #expect(rows[waiting.eventID.uuidString] == ["false", "0", "1"])
            #expect(try await browser.evaluate(
                "document.querySelector('tr[data-event-id=\"\(stale.eventID.uuidString)\"] li.attention') !== null") as? Bool == true)

            // Filter by state with the page's own form (a plain GET): only the overdue revocation.
            _ = try? await browser.evaluate(
                "document.getElementById('state-filter').value = 'overdue'; document.getElementById('filters').submit(); true")
            _ = try await browser.waitFor("location.search", as: String.self) { $0.contains("state=overdue") }
            let overdueOnly = try await browser.waitFor(Self.overviewExpression, as: String.self) {
                Self.decode([String: [String]].self, $0).map { Array($0.keys) } == [stale.eventID.uuidString]
            }
            #expect(!overdueOnly.isEmpty)
            #expect(try await browser.evaluate(
                "document.querySelector('#state-counts li.selected').dataset.state") as? String == "overdue")

            // Filter by family member: Noah's revocation alone, and Noah's counts.
            _ = try? await browser.evaluate(
                "location.href = '?family_member_id=\(noah.familyMemberID.uuidString.lowercased())'; true")
            _ = try await browser.waitFor(Self.overviewExpression, as: String.self) {
                Self.decode([String: [String]].self, $0).map { Array($0.keys) } == [waiting.eventID.uuidString]
            }
            let noahCounts = try await browser.waitFor(Self.countsExpression, as: String.self) {
                Self.decode([String: Int].self, $0)?["pending"] == 1
            }
            #expect(Self.decode([String: Int].self, noahCounts) == [
                "pending": 1, "applied": 0, "already_applied": 0, "failed": 0, "overdue": 0,
                "delivered": 0, "not_now": 0, "healed": 0, "reissued": 0, "expired": 0,
            ])
            _ = try await browser.waitFor("document.querySelectorAll('#plot svg text.empty').length", as: Int.self) { $0 == 1 }
            #expect(try await browser.evaluate("document.getElementById('family-filter').value") as? String
                == noah.familyMemberID.uuidString.lowercased())
        }
    }
}
