import Foundation
import Hummingbird

/// The monitoring page: plain HTML and JavaScript bundled with the module, no build step.
enum MonitoringPage {
    enum Asset {
        case html, script

        var resource: (name: String, extension: String, contentType: String) {
            switch self {
            case .html: ("monitor", "html", "text/html; charset=utf-8")
            case .script: ("monitor", "js", "text/javascript; charset=utf-8")
            }
        }
    }

    static let html = load(.html)
    static let script = load(.script)

    static func response(for asset: Asset) -> Response {
        let bytes = asset == .html ? html : script
        return Response(
            status: .ok,
            headers: [
                .contentType: asset.resource.contentType, .cacheControl: "no-cache",
                .contentSecurityPolicy: "default-src 'self'; style-src 'self' 'unsafe-inline'",
            ],
            body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    private static func load(_ asset: Asset) -> [UInt8] {
        let resource = asset.resource
        guard let url = Bundle.module.url(forResource: resource.name, withExtension: resource.extension),
            let data = try? Data(contentsOf: url)
        else { return Array("monitoring page missing from the bundle\n".utf8) }
        return [UInt8](data)
    }
}
