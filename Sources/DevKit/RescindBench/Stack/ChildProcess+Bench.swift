import Foundation
import RescindDevKit

extension ChildProcess {
    /// Its peak resident memory so far.
    var peakResident: Int? { ProcessMemory.peakResident(pid: pid) }
}
