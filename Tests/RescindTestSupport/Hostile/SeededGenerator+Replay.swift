import Foundation
import RescindDevKit

extension SeededGenerator {
    /// The seed of a hostile run: `RESCIND_HOSTILE_SEED` when set (to replay), else `fallback`.
    public static func seed(fallback: UInt64) -> UInt64 {
        ProcessInfo.processInfo.environment["RESCIND_HOSTILE_SEED"].flatMap { UInt64($0) } ?? fallback
    }
}
