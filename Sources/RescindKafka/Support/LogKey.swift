/// Logger metadata keys of this module, in one place so that log queries can rely on them.
enum LogKey {
    static let error = "kafka.error"
    static let facility = "kafka.facility"
    static let topic = "kafka.topic"
    static let partition = "kafka.partition"
    static let partitions = "kafka.partitions"
    static let offset = "kafka.offset"
}
