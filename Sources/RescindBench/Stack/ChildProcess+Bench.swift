import Foundation
import RescindDevKit

extension ChildProcess {
    /// Its peak resident memory so far.
    var peakResident: Int? { ProcessMemory.peakResident(pid: pid) }

    /// A service or agent of the bench, logging to `<logDirectory>/<name>.log`.
    convenience init(name: String, executable: URL, arguments: [String] = [], environment: [String: String], logDirectory: URL) throws {
        do {
            try self.init(
                name: name, executable: executable, arguments: arguments, environment: environment,
                output: .file(logDirectory.appendingPathComponent("\(name).log")))
        } catch let error as ChildProcess.LaunchError {
            throw BenchError("\(error) (scripts/bench.sh does)")
        }
    }
}
