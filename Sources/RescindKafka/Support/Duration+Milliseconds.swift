import RescindObservability

extension Duration {
    /// The value of a librdkafka `*.ms` configuration property (`clampedMilliseconds`).
    var configurationMilliseconds: String { String(clampedMilliseconds) }
}
