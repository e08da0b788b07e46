/// Command line of `rescind-devbroker`, parsed by hand (four flags need no parser library).
struct DevBrokerOptions {
    var brokers = 1
    var partitions: Int32 = 4
    var addressFile: String?
    var controlPort: UInt16?

    static let usage = """
        usage: rescind-devbroker [--brokers N] [--partitions N] [--address-file PATH] [--control-port PORT]

        Runs librdkafka's in-process mock Kafka cluster for development and tests only,
        with Rescind's topics created. Prints `bootstrap=HOST:PORT[,…]` on stdout, writes
        the bare address to PATH if given, and runs until SIGTERM or SIGINT.

          --brokers N          brokers in the cluster, 1...64 (default 1)
          --partitions N       partitions per topic, >= 1 (default 4)
          --address-file PATH  file that receives the bootstrap address; removed on exit
          --control-port PORT  loopback TCP port for fault injection (0 picks a free one);
                               one command per line: down ID | up ID | status | help
        """

    struct Invalid: Error, CustomStringConvertible {
        var description: String
    }

    static func parse(_ arguments: some Sequence<String>) throws -> DevBrokerOptions {
        var options = DevBrokerOptions()
        var remaining = Array(arguments)[...]
        while let flag = remaining.popFirst() {
            func value() throws -> String {
                guard let value = remaining.popFirst() else { throw Invalid(description: "\(flag) needs a value") }
                return value
            }
            switch flag {
            case "--brokers":
                let text = try value()
                guard let brokers = Int(text), (1...64).contains(brokers) else {
                    throw Invalid(description: "--brokers must be in 1...64, not '\(text)'")
                }
                options.brokers = brokers
            case "--partitions":
                let text = try value()
                guard let partitions = Int32(text), partitions >= 1 else {
                    throw Invalid(description: "--partitions must be a positive number, not '\(text)'")
                }
                options.partitions = partitions
            case "--address-file":
                options.addressFile = try value()
            case "--control-port":
                let text = try value()
                guard let port = UInt16(text) else { throw Invalid(description: "--control-port must be in 0...65535, not '\(text)'") }
                options.controlPort = port
            case "-h", "--help":
                throw Invalid(description: "")
            default:
                throw Invalid(description: "unknown argument '\(flag)'")
            }
        }
        return options
    }
}
