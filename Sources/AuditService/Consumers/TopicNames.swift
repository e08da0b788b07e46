import RescindProtocol

/// The deployment's topic names: `Topic` raw values behind the configured prefix.
struct TopicNames: Sendable {
    let prefix: String

    func name(_ topic: Topic) -> String { prefix + topic.rawValue }

    func topic(named name: String) -> Topic? {
        guard name.hasPrefix(prefix) else { return nil }
        return Topic(rawValue: String(name.dropFirst(prefix.count)))
    }

    /// What the audit service consumes.
    var inputs: [String] { [Topic.revocationEvents, .accessEvents, .deviceAcks].map(name) }
}
