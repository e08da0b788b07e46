/// Topics provisioned like a database schema: creates the missing ones with their
/// spec, and verifies the existing ones against it, reporting drift instead of ignoring it.
/// Idempotent: a second run creates nothing and reports the same drift.
public struct TopicProvisioning: Sendable {
    /// What one run found and did.
    public struct Report: Sendable, Hashable {
        /// Topics this run created.
        public var created: [String]
        /// Topics that already existed and match their spec.
        public var verified: [String]
        /// Every difference from the specs, topic by topic.
        public var drift: [KafkaTopicDrift]
        /// Topics still missing (only when asked not to create them).
        public var missing: [String]

        public var isClean: Bool { drift.isEmpty && missing.isEmpty }
    }

    public let topics: [KafkaTopic]

    public init(topics: [KafkaTopic]) {
        self.topics = topics
    }

    /// How `description` differs from `spec`. More partitions or replicas than the spec
    /// are fine (partitions cannot be removed; more copies only add safety).
    public static func drift(of spec: KafkaTopic, in description: KafkaTopic) -> [KafkaTopicDrift] {
        var drift: [KafkaTopicDrift] = []
        if description.partitions < spec.partitions {
            drift.append(.init(topic: spec.name, kind: .tooFewPartitions(expected: spec.partitions, actual: description.partitions)))
        }
        if description.replicationFactor < spec.replicationFactor {
            drift.append(.init(
                topic: spec.name,
                kind: .replicationFactorTooLow(expected: spec.replicationFactor, actual: description.replicationFactor)))
        }
        for (key, expected) in spec.configuration.sorted(by: { $0.key < $1.key }) {
            let actual = description.configuration[key]
            if actual != expected {
                drift.append(.init(topic: spec.name, kind: .configuration(key: key, expected: expected, actual: actual)))
            }
        }
        return drift
    }

    /// Creates the missing topics (unless `createMissing` is false) and verifies all of them.
    /// - Parameter timeout: for each admin request, and for newly created topics to appear
    ///   in the cluster's metadata.
    /// - Throws: `KafkaError` `.admin` when the cluster does not answer or refuses a topic
    ///   (for example a replication factor above the number of brokers). Drift is not an
    ///   error here: it is in the report.
    public func run(with admin: KafkaAdmin, createMissing: Bool = true, timeout: Duration = .seconds(30)) async throws -> Report {
        let names = topics.map(\.name)
        let existing = try await admin.existingTopics(names, timeout: timeout)
        let absent = topics.filter { existing[$0.name] == nil }
        var created: [String] = []
        if createMissing, !absent.isEmpty {
            let outcomes = try await admin.createTopics(absent, timeout: timeout)
            created = absent.map(\.name).filter { outcomes[$0] == .created }
            try await waitUntilListed(names, admin: admin, timeout: timeout)
        }
        let described = try await admin.describeTopics(names, timeout: timeout)
        var report = Report(created: created, verified: [], drift: [], missing: [])
        for spec in topics {
            guard let description = described[spec.name] else {
                report.missing.append(spec.name)
                continue
            }
            let drift = Self.drift(of: spec, in: description)
            report.drift += drift
            if drift.isEmpty, !created.contains(spec.name) { report.verified.append(spec.name) }
        }
        return report
    }

    /// A topic just created may take a moment to reach every broker's metadata.
    private func waitUntilListed(_ names: [String], admin: KafkaAdmin, timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try await admin.existingTopics(names, timeout: timeout).count == names.count { return }
            try await Task.sleep(for: .milliseconds(200))
        }
    }
}
