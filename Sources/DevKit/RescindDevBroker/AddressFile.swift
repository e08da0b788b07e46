import Foundation

/// The file through which scripts learn the bootstrap address. Written atomically
/// (temporary file, then rename) so a reader polling for it never sees half a line.
struct AddressFile {
    let path: String

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    func write(_ address: String) throws {
        let temporary = "\(path).\(ProcessInfo.processInfo.processIdentifier).tmp"
        try Data((address + "\n").utf8).write(to: URL(fileURLWithPath: temporary))
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw Failure(description: "cannot rename \(temporary) to \(path): \(String(cString: strerror(code)))")
        }
    }

    func remove() {
        unlink(path)
    }
}
