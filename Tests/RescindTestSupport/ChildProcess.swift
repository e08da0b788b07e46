import Foundation

/// Runs an executable to completion without blocking Swift's cooperative pool.
///
/// Waiting for a child (`waitUntilExit`, reading its pipe to the end) is blocking
/// work: done on the pool it starves in-process services on a 2-core machine
/// (their requests time out). Here it happens on a dispatch queue.
public enum ChildProcess {
    public struct Result: Sendable {
        public let status: Int32
        /// Standard output and standard error, interleaved.
        public let output: String
    }

    public static func run(
        _ executable: URL, _ arguments: [String], environment: [String: String]? = nil, directory: URL? = nil
    ) async throws -> Result {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        if let directory { process.currentDirectoryURL = directory }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                let data = pipe.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                continuation.resume(returning: Result(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self)))
            }
        }
    }
}
