import Foundation
import RescindCrypto
import RescindProtocol
import Testing

/// The monitoring page in a real headless browser (Debian's Chromium): it asks for a
/// token, refuses a wrong one, signs in with the operator's, shows a revocation created
/// by the test, follows the acks over the event stream without reloading, and stays
/// signed in across a reload of the tab.
@Suite struct MonitoringPageTests {
    /// Rows of the revocation table as the page rendered them.
    static let rowsExpression = """
        JSON.stringify([...document.querySelectorAll('#revocations tr[data-event-id]')].map(row => ({
          event: row.dataset.eventId, state: row.dataset.state,
          timing: row.querySelector('.timing').textContent,
          devices: Object.fromEntries([...row.querySelectorAll('li[data-device-id]')]
            .map(item => [item.dataset.deviceId, item.dataset.state]))
        })))
        """

    struct Row {
        let event: UUID
        let state: String
        let timing: String
        let devices: [UUID: String]
    }

    static func rows(_ text: String) -> [Row] {
        struct Rendered: Decodable {
            let event: UUID
            let state: String
            let timing: String
            let devices: [String: String]
        }
        let rendered = (try? JSONDecoder().decode([Rendered].self, from: Data(text.utf8))) ?? []
        return rendered.map { row in
            Row(
                event: row.event, state: row.state, timing: row.timing,
                devices: Dictionary(uniqueKeysWithValues: row.devices.compactMap { key, value in
                    UUID(uuidString: key).map { ($0, value) }
                }))
        }
    }

    @Test(.enabled(if: HeadlessChromium.executable != nil, "chromium is not installed: apt-get install -y chromium"))
    func thePageShowsARevocationAndFollowsItsAcksLive() async throws {
        try await AuditTestBed.with { bed in
            let emma = TestFamily()
            let adultC = UUID()
            let phone = TestFamily.Device(userID: adultC), laptop = TestFamily.Device(userID: emma.ownerUserID)
            let revocation = emma.revocation(of: adultC, devices: [phone, laptop])
            try await bed.publish(revocation)
            try await bed.eventually("tracked") { try await bed.deviceStates(revocation.eventID).count == 2 }

            let browser = try await HeadlessChromium(url: bed.service.baseURL)
            defer { browser.quit() }

            // Signed out: the form, and no data.
            _ = try await browser.waitFor("document.body.dataset.auth || ''", as: String.self) { $0 == "signed-out" }
            #expect(try await browser.evaluate("document.getElementById('monitor').hidden") as? Bool == true)
            // A wrong token is refused, forgotten, and shows nothing.
            try await Self.signIn(browser, with: "not-the-operator-token-" + String(repeating: "x", count: 20))
            _ = try await browser.waitFor("document.body.dataset.auth", as: String.self) { $0 == "refused" }
            #expect(try await browser.evaluate("document.getElementById('signin-error').textContent") as? String
                == "That token was refused.")
            #expect(try await browser.evaluate("sessionStorage.length") as? Int == 0)
            #expect(try await browser.evaluate("document.querySelectorAll('#revocations tr[data-event-id]').length") as? Int == 0)
            // The operator's token signs in; it is kept in the tab, never in the address.
            try await Self.signIn(browser, with: bed.operatorToken)
            _ = try await browser.waitFor("document.body.dataset.auth", as: String.self) { $0 == "signed-in" }
            #expect(try await browser.evaluate("document.body.dataset.scope") as? String == "operator")
            #expect(try await browser.evaluate("location.href.includes(\(Self.literal(bed.operatorToken)))") as? Bool == false)
            func row(_ condition: @escaping (Row) -> Bool) async throws -> Row {
                let text = try await browser.waitFor(Self.rowsExpression, as: String.self) { text in
                    Self.rows(text).contains { $0.event == revocation.eventID && condition($0) }
                }
                return Self.rows(text).first { $0.event == revocation.eventID }!
            }

            // Loaded from the snapshot: the revocation, both devices pending, stream live.
            let loaded = try await row { $0.devices.count == 2 }
            #expect(loaded.state == "open")
            #expect(loaded.devices == [phone.id: "pending", laptop.id: "pending"])
            _ = try await browser.waitFor("document.getElementById('connection').dataset.state", as: String.self) {
                $0 == "live"
            }
            _ = try await browser.evaluate("window.loadedOnce = 'yes'")

            // One ack: that device's state changes, the revocation stays open.
            try await bed.publish(TestFamily.ack(phone, for: revocation), signedBy: phone.key)
            let partly = try await row { $0.devices[phone.id] == "applied" }
            #expect(partly.state == "open" && partly.devices[laptop.id] == "pending")

            // The last ack completes it, with its timing.
            try await bed.publish(TestFamily.ack(laptop, for: revocation, outcome: .alreadyApplied), signedBy: laptop.key)
            let done = try await row { $0.state == "completed" }
            #expect(done.devices == [phone.id: "applied", laptop.id: "already_applied"])
            #expect(done.timing.hasSuffix(" ms"))
            // Each device's lifecycle, folded under its state: issued at the commit, then its ack.
            let history = """
                [...document.querySelectorAll('tr[data-event-id="\(revocation.eventID.uuidString)"] \
                li[data-device-id="\(phone.id.uuidString)"] details.history li')].map(li => li.dataset.state).join(',')
                """
            _ = try await browser.waitFor(history, as: String.self) { $0 == "issued,applied" }

            // An overdue device and a forged ack appear in their lists.
            let stale = emma.revocation(
                of: adultC, devices: [TestFamily.Device(userID: adultC)], version: 3, at: Date(timeIntervalSinceNow: -3600))
            try await bed.publish(stale)
            _ = try await browser.waitFor(
                "document.querySelector('#alerts li[data-event-id=\"\(stale.eventID.uuidString)\"]') !== null",
                as: Bool.self) { $0 }
            try await bed.publish(TestFamily.ack(phone, for: revocation), signedBy: Ed25519.PrivateKey())
            _ = try await browser.waitFor(
                "document.querySelector('#rejections li[data-reason=\"bad_signature\"]') !== null", as: Bool.self) { $0 }

            // A key chain violation the phone reported shows in its section, newest first, with
            // its family member, reporter device, code, detail and time.
            let violation = emma.violation(by: phone, code: .fork, detail: "two different v3 statements")
            try await bed.publish(violation, signedBy: phone.key)
            let violationRow = "document.querySelector('#violations tr[data-report-id=\"\(violation.reportID.uuidString)\"]')"
            _ = try await browser.waitFor("\(violationRow) !== null", as: Bool.self) { $0 }
            #expect(try await browser.evaluate("\(violationRow).dataset.code") as? String == "fork")
            #expect(try await browser.evaluate("\(violationRow).dataset.verification") as? String == "device_signature")
            #expect(try await browser.evaluate("\(violationRow).querySelector('.detail').textContent") as? String
                == "two different v3 statements")
            let cells = try await browser.evaluate("\(violationRow).textContent") as? String ?? ""
            #expect(cells.contains(String(phone.id.uuidString.prefix(8))))
            #expect(cells.contains(String(emma.familyMemberID.uuidString.prefix(8))))
            let newer = emma.violation(by: phone, code: .rollback, detail: "a chain shorter than the one verified")
            try await bed.publish(newer, signedBy: phone.key)
            _ = try await browser.waitFor(
                "document.querySelector('#violations tr[data-report-id]').dataset.reportId", as: String.self
            ) { $0 == newer.reportID.uuidString }

            // All of it without a reload.
            #expect(try await browser.evaluate("window.loadedOnce") as? String == "yes")

            // A reload of the tab does not ask again.
            // (The evaluation may end with the page it ran in.)
            _ = try? await browser.evaluate("setTimeout(() => location.reload(), 0); true")
            _ = try await browser.waitFor("window.loadedOnce === undefined && document.body.dataset.auth === 'signed-in'", as: Bool.self) { $0 }
            _ = try await row { $0.state == "completed" }
            // The violations come back from the snapshot (GET /v1/key-chain-violations), newest first.
            let reloaded = try await browser.waitFor(
                "[...document.querySelectorAll('#violations tr[data-report-id]')].map(row => row.dataset.code).join(',')",
                as: String.self) { $0 == "rollback,fork" }
            #expect(reloaded == "rollback,fork")
        }
    }

    /// Types `token` into the sign-in form and submits it.
    static func signIn(_ browser: HeadlessChromium, with token: String) async throws {
        do {
            _ = try await browser.evaluate(
                "document.getElementById('token').value = \(literal(token)); document.getElementById('signin').requestSubmit(); true")
        } catch HeadlessChromium.Failure.protocolError(let message) where HeadlessChromium.isNavigation(message) {
            // The submission replaced the page before the answer came back: it was made.
        }
    }

    /// `text` as a JavaScript string literal.
    static func literal(_ text: String) -> String {
        String(decoding: try! JSONEncoder().encode(text), as: UTF8.self)
    }
}
