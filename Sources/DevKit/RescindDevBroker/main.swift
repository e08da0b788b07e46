import Foundation
import Logging
import RescindDevKit
import RescindKafka
import RescindObservability

// rescind-devbroker: librdkafka's mock Kafka cluster as a process, for the local dev
// stack and end-to-end tests. DEVELOPMENT ONLY — see RescindDevKit's DevelopmentCluster.

RescindVersion.answerIfAsked()
LoggingSystem.bootstrap(StreamLogHandler.standardError)
let logger = Logger(label: "rescind.devbroker")

let options: DevBrokerOptions
do {
    options = try DevBrokerOptions.parse(CommandLine.arguments.dropFirst())
} catch {
    let message = "\(error)"
    FileHandle.standardError.write(Data(((message.isEmpty ? "" : "rescind-devbroker: \(message)\n\n") + DevBrokerOptions.usage + "\n").utf8))
    exit(message.isEmpty ? 0 : 2)
}

do {
    let cluster = try DevelopmentCluster(brokers: options.brokers)
    let replicationFactor = Int16(min(3, options.brokers))
    try await cluster.createTopics(RescindTopics.specs(partitions: options.partitions, replicationFactor: replicationFactor))

    let control = try options.controlPort.map { try ControlServer(port: $0, cluster: cluster, logger: logger) }
    control?.start()

    let addressFile = options.addressFile.map(AddressFile.init(path:))
    try addressFile?.write(cluster.bootstrapServers)
    // Unbuffered, so a parent reading our stdout through a pipe sees the line at once.
    FileHandle.standardOutput.write(Data("bootstrap=\(cluster.bootstrapServers)\n".utf8))
    logger.notice(
        "development Kafka cluster up",
        metadata: [
            "brokers": "\(options.brokers)", "partitions": "\(options.partitions)",
            "topics": "\(RescindTopics.all.joined(separator: ","))",
            "control": "\(control.map { "127.0.0.1:\($0.port)" } ?? "off")",
        ]
    )

    let received = await TerminationSignal.wait()
    logger.notice("signal \(received): shutting down")
    addressFile?.remove()
    control?.stop()
    cluster.shutdown()
    exit(0)
} catch {
    logger.error("rescind-devbroker failed: \(error)")
    exit(1)
}
