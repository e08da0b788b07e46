import Foundation
import RescindConfiguration
import RescindTLS
import Testing

@Suite struct ClientTLSTests {
    @Test func plainHTTPIsRefusedUnlessAllowedAndLoopback() throws {
        let strict = ClientTLS.strict
        #expect(throws: Never.self) { try strict.check(URL(string: "https://grant.example:8443")!) }
        #expect(throws: ClientTLSError.self) { try strict.check(URL(string: "http://127.0.0.1:8080")!) }
        let loopback = ClientTLS(plainHTTP: .loopback)
        for allowed in ["http://127.0.0.1:8080", "http://localhost:1", "http://[::1]:80/", "http://127.1.2.3"] {
            #expect(throws: Never.self, "\(allowed)") { try loopback.check(URL(string: allowed)!) }
        }
        for refused in ["http://10.0.0.1:8080", "http://grant.example", "http://127.0.0.1.example.com", "http://0.0.0.0:8080"] {
            #expect(throws: ClientTLSError.self, "\(refused)") { try loopback.check(URL(string: refused)!) }
        }
        #expect(throws: ClientTLSError.self) { try loopback.check(URL(string: "ftp://127.0.0.1")!) }
    }

    @Test func theRefusalIsOneLineThatSaysWhatToDo() {
        do {
            try ClientTLS.strict.check(URL(string: "http://127.0.0.1:8080/v1/me?token=secret")!)
            Issue.record("not refused")
        } catch {
            let line = String(describing: error)
            #expect(line == "refusing plain HTTP to http://127.0.0.1:8080: use https://, or set RESCIND_ALLOW_PLAIN_HTTP=loopback to allow it to a loopback address")
        }
        let remote = String(describing: ClientTLSError.plainHTTPRefused(origin: "http://a", advice: "b"))
        #expect(!remote.contains("\n"))
    }

    @Test func policyIsReadFromTheEnvironment() throws {
        var reader = EnvironmentReader(["RESCIND_AGENT_CA_FILE": "/ca.pem", "RESCIND_AGENT_ALLOW_PLAIN_HTTP": "loopback"])
        let policy = try reader.clientTLS(ca: "RESCIND_AGENT_CA_FILE", plainHTTP: "RESCIND_AGENT_ALLOW_PLAIN_HTTP")
        #expect(policy.caFile == "/ca.pem" && policy.plainHTTP == .loopback)
        var unset = EnvironmentReader([:])
        #expect(try unset.clientTLS(ca: "RESCIND_CA_FILE", plainHTTP: "RESCIND_ALLOW_PLAIN_HTTP") == .strict)
        var wrong = EnvironmentReader(["RESCIND_ALLOW_PLAIN_HTTP": "yes"])
        #expect(throws: ConfigurationError.self) { try wrong.clientTLS(ca: "RESCIND_CA_FILE", plainHTTP: "RESCIND_ALLOW_PLAIN_HTTP") }
    }

    @Test func anUnusableCAFileIsNamedByItsVariable() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rescind-not-a-ca-\(UUID()).pem").path
        try Data("not a certificate".utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        for file in [path, "/nonexistent/ca.pem"] {
            do {
                _ = try ClientTLS(caFile: file, caVariable: "RESCIND_AGENT_CA_FILE").configuration()
                Issue.record("accepted \(file)")
            } catch let error as ConfigurationError {
                #expect(error.variable == "RESCIND_AGENT_CA_FILE")
                #expect(!error.description.contains(file))
            }
        }
    }
}
