import Foundation
import GrantService
import Logging
import RescindClient
import RescindConfiguration
import RescindTLS
import RescindTestSupport
import Testing

/// Every hop to the grant service is HTTPS, checked against the CA the client was given.
@Suite struct TLSTests {
    @Test func theServiceAnswersHTTPSAndNothingInPlainText() async throws {
        try await GrantServiceHarness.with { service in
            #expect(service.baseURL.scheme == "https")
            let health = try await TestHTTP.send("GET", service.baseURL.appendingPathComponent("health"))
            #expect(health.status == 200 && health.text == #"{"status":"ok"}"#)
            // The same port spoken to in plain HTTP answers nothing a client could read as HTTP.
            var components = URLComponents(url: service.baseURL, resolvingAgainstBaseURL: false)!
            components.scheme = "http"
            await #expect(throws: (any Error).self) {
                _ = try await TestHTTP.send(
                    "GET", components.url!.appendingPathComponent("health"), tls: ClientTLS(plainHTTP: .loopback),
                    timeout: .seconds(5))
            }
        }
    }

    /// An impostor: a server whose certificate another CA signed (or a client given the wrong CA).
    @Test func aClientTrustingAnotherCAIsRefusedTheConnection() async throws {
        let impostor = try await TestTLS.impostor()
        try await GrantServiceHarness.with { service in
            let client = GrantServiceClient(baseURL: service.baseURL, timeout: .seconds(3), tls: impostor.client)
            do {
                _ = try await client.serviceKey()
                Issue.record("a certificate from another CA was accepted")
            } catch let error as GrantServiceError {
                #expect(error.code == "unreachable" && error.message.contains("TLS"), "\(error.message)")
                #expect(!error.message.contains("\n"))
            }
            // The right CA opens it.
            _ = try await GrantServiceClient(baseURL: service.baseURL, tls: service.clientTLS).serviceKey()
        }
    }

    @Test func plainHTTPIsRefusedBeforeAnythingIsSent() async throws {
        for (url, policy) in [
            ("http://grant.example:8080", ClientTLS(plainHTTP: .loopback)),  // never to another host
            ("http://10.1.2.3:8080", ClientTLS(plainHTTP: .loopback)),
            ("http://127.0.0.1:9", ClientTLS.strict),  // to loopback only when allowed
        ] {
            do {
                _ = try await GrantServiceClient(baseURL: URL(string: url)!, tls: policy).serviceKey()
                Issue.record("\(url) was not refused")
            } catch let error as GrantServiceError {
                #expect(error.code == "plain_http_refused", "\(url): \(error)")
                #expect(error.message.hasPrefix("refusing plain HTTP to"), "\(error.message)")
            }
        }
    }

    @Test func anUnusableCertificateStopsTheServiceNamingTheVariable() async throws {
        for (certificate, key, variable) in [
            ("/nonexistent/server.pem", "/nonexistent/server.key", "RESCIND_GRANT_TLS_CERT_FILE"),
            (try await TestTLS.shared().certificateFile, try await TestTLS.impostor().keyFile, "RESCIND_GRANT_TLS_KEY_FILE"),
        ] {
            var configuration = GrantServiceConfiguration()
            configuration.http.tls = ServerTLS(
                certificateFile: certificate, keyFile: key, certificateVariable: "RESCIND_GRANT_TLS_CERT_FILE",
                keyVariable: "RESCIND_GRANT_TLS_KEY_FILE")
            configuration.database.url = "postgres://nobody@127.0.0.1:1/never-reached"
            do {
                _ = try await GrantServiceApplication.build(configuration: configuration, logger: Logger(label: "test"))
                Issue.record("started with an unusable \(variable)")
            } catch let error as ConfigurationError {
                #expect(error.variable == variable)
                #expect(String(describing: error).hasPrefix("\(variable): ") && !String(describing: error).contains("\n"))
            }
        }
    }
}
