import Foundation
import RescindObservability
import Synchronization

/// A token bucket per key (a source address, a device): each key may spend `rate.burst`
/// requests at once and earns `rate.perMinute` more a minute, up to `rate.burst` again.
///
/// Held in memory, per process: replicas each grant the whole budget (a limit is per instance).
/// The number of keys is bounded (`maxKeys`): full buckets are forgotten first (they hold no
/// information), and when every bucket is in use a new key shares one overflow bucket, so a
/// flood from ever new addresses cannot grow the map without bound either.
public final class RateLimiter: Sendable {
    /// A budget: `burst` requests at once, `perMinute` earned back a minute. A `burst` of 0
    /// refuses everything; `nil` where a limit is configured means no limit.
    public struct Rate: Sendable, Equatable {
        public var burst: Int
        public var perMinute: Double

        public init(burst: Int, perMinute: Double) {
            self.burst = burst
            self.perMinute = perMinute
        }

        /// `n` a minute, `n` at once: the shape every `RESCIND_*_PER_MINUTE` variable sets.
        public static func perMinute(_ n: Int) -> Rate { Rate(burst: n, perMinute: Double(n)) }

        /// `n` a minute, but at most `burstSeconds` seconds' worth at once (at least one when
        /// `n` is not 0): a flood from one source meets the refusals within seconds instead of
        /// being served a whole minute's budget first.
        public static func perMinute(_ n: Int, burstSeconds: Int) -> Rate {
            Rate(burst: n == 0 ? 0 : max(1, n * min(60, max(1, burstSeconds)) / 60), perMinute: Double(n))
        }
    }

    public enum Decision: Sendable, Equatable {
        case allowed
        /// Refused; the same request may succeed after this many seconds (at least 1).
        case refused(retryAfter: Int)
    }

    struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    struct State {
        var buckets: [String: Bucket] = [:]
        var overflow: Bucket?
    }

    public let rate: Rate
    let maxKeys: Int
    let now: @Sendable () -> ContinuousClock.Instant
    private let state = Mutex(State())

    /// The longest `Retry-After` told (a rate of almost nothing would otherwise say days).
    static let maxRetryAfter = 3600

    public init(
        rate: Rate, maxKeys: Int = 100_000, now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }
    ) {
        self.rate = rate
        self.maxKeys = maxKeys
        self.now = now
    }

    /// Spends one request of `key`'s budget, or says when there will be one.
    public func acquire(_ key: String) -> Decision {
        let now = self.now()
        return state.withLock { state in
            if state.buckets[key] == nil, state.buckets.count >= maxKeys { forgetFullBuckets(&state, now: now) }
            if state.buckets[key] == nil, state.buckets.count >= maxKeys {
                var overflow = state.overflow ?? Bucket(tokens: Double(rate.burst), updated: now)
                let decision = spend(&overflow, now: now)
                state.overflow = overflow
                return decision
            }
            var bucket = state.buckets[key] ?? Bucket(tokens: Double(rate.burst), updated: now)
            let decision = spend(&bucket, now: now)
            state.buckets[key] = bucket
            return decision
        }
    }

    /// Keys currently remembered (for tests of the bound).
    public var keys: Int { state.withLock { $0.buckets.count } }

    private func refill(_ bucket: inout Bucket, now: ContinuousClock.Instant) {
        let elapsed = now - bucket.updated
        let seconds = elapsed.seconds
        bucket.tokens = min(Double(rate.burst), bucket.tokens + seconds * rate.perMinute / 60)
        bucket.updated = now
    }

    private func spend(_ bucket: inout Bucket, now: ContinuousClock.Instant) -> Decision {
        refill(&bucket, now: now)
        if bucket.tokens >= 1 {
            bucket.tokens -= 1
            return .allowed
        }
        guard rate.perMinute > 0, rate.burst > 0 else { return .refused(retryAfter: Self.maxRetryAfter) }
        let wait = (1 - bucket.tokens) * 60 / rate.perMinute
        return .refused(retryAfter: min(Self.maxRetryAfter, max(1, Int(wait.rounded(.up)))))
    }

    private func forgetFullBuckets(_ state: inout State, now: ContinuousClock.Instant) {
        state.buckets = state.buckets.filter { _, bucket in
            var bucket = bucket
            refill(&bucket, now: now)
            return bucket.tokens < Double(rate.burst)
        }
    }
}
