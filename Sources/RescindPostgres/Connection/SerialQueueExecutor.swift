#if os(Linux)
@preconcurrency import Dispatch
#else
import Dispatch
#endif

/// Runs an actor's jobs on a private serial `DispatchQueue` instead of Swift's cooperative
/// pool, so the blocking libpq calls a connection makes never starve other tasks (pattern from
/// GRDB's `DispatchQueueActor`).
final class SerialQueueExecutor: SerialExecutor {
    let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async {
            job.runSynchronously(on: self.asUnownedSerialExecutor())
        }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    func checkIsolated() {
        dispatchPrecondition(condition: .onQueue(queue))
    }
}

#if os(Linux)
// @unchecked Sendable: the only state is an immutable reference to a DispatchQueue, which is
// thread-safe; corelibs Dispatch just does not declare it Sendable.
extension SerialQueueExecutor: @unchecked Sendable {}
#endif
