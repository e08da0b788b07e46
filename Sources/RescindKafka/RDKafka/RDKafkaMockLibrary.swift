import CRdKafka
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// DEVELOPMENT AND TESTS ONLY: the librdkafka whose mock cluster `RDKafkaMockCluster` runs —
/// the one this process links (Debian's 2.0.2), or another copy loaded from a file beside it
/// (`dlopen` with `RTLD_LOCAL | RTLD_DEEPBIND`: the copy resolves its own symbols first and
/// never replaces the linked library, which every client of the process keeps using).
///
/// Why another copy: 2.0.2's mock answers a consumer group's first JoinGroup only after a fixed
/// 3 s (`group.initial.rebalance.delay.ms`, hard-coded there), which every test that starts a
/// consumer group paid; newer mocks let it be set (`rd_kafka_mock_group_initial_rebalance_delay_ms`).
/// The clients under test stay those of the linked library; only the broker they talk to changes.
struct RDKafkaMockLibrary: @unchecked Sendable {
    // Safe: immutable C function pointers into a library that is never unloaded.
    typealias ClusterNew = @convention(c) (OpaquePointer?, Int32) -> OpaquePointer?
    typealias ClusterBootstraps = @convention(c) (OpaquePointer?) -> UnsafePointer<CChar>?
    typealias ClusterDestroy = @convention(c) (OpaquePointer?) -> Void
    typealias TopicCreate = @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, Int32, Int32) -> rd_kafka_resp_err_t
    typealias BrokerSet = @convention(c) (OpaquePointer?, Int32) -> rd_kafka_resp_err_t
    typealias PartitionSetLeader = @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, Int32, Int32) -> rd_kafka_resp_err_t
    typealias CoordinatorSet = @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, Int32) -> rd_kafka_resp_err_t
    typealias PushRequestErrors = @convention(c) (OpaquePointer?, Int16, Int, UnsafePointer<rd_kafka_resp_err_t>?) -> Void
    typealias ClearRequestErrors = @convention(c) (OpaquePointer?, Int16) -> Void
    typealias GroupInitialDelay = @convention(c) (OpaquePointer?, Int32) -> Void
    typealias VersionString = @convention(c) () -> UnsafePointer<CChar>?
    typealias ConfNew = @convention(c) () -> OpaquePointer?
    typealias ConfSet = @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafeMutablePointer<CChar>?, Int) -> rd_kafka_conf_res_t
    typealias ClientNew = @convention(c) (rd_kafka_type_t, OpaquePointer?, UnsafeMutablePointer<CChar>?, Int) -> OpaquePointer?
    typealias ClientDestroy = @convention(c) (OpaquePointer?) -> Void

    /// The file it was loaded from; nil: the linked library.
    let path: String?
    let clusterNew: ClusterNew
    let clusterBootstraps: ClusterBootstraps
    let clusterDestroy: ClusterDestroy
    let topicCreate: TopicCreate
    let brokerSetDown: BrokerSet
    let brokerSetUp: BrokerSet
    let partitionSetLeader: PartitionSetLeader
    let coordinatorSet: CoordinatorSet
    let pushRequestErrors: PushRequestErrors
    let clearRequestErrors: ClearRequestErrors
    /// Absent from 2.0.x.
    let groupInitialDelay: GroupInitialDelay?
    let versionString: VersionString
    /// The mock's host client of a loaded library (the linked one uses `RDKafkaHandle`).
    let confNew: ConfNew?
    let confSet: ConfSet?
    let clientNew: ClientNew?
    let clientDestroy: ClientDestroy?

    var version: String { versionString().map { String(cString: $0) } ?? "unknown" }

    static let linked = RDKafkaMockLibrary(
        path: nil, clusterNew: rd_kafka_mock_cluster_new, clusterBootstraps: rd_kafka_mock_cluster_bootstraps,
        clusterDestroy: rd_kafka_mock_cluster_destroy, topicCreate: rd_kafka_mock_topic_create,
        brokerSetDown: rd_kafka_mock_broker_set_down, brokerSetUp: rd_kafka_mock_broker_set_up,
        partitionSetLeader: rd_kafka_mock_partition_set_leader, coordinatorSet: rd_kafka_mock_coordinator_set,
        pushRequestErrors: rd_kafka_mock_push_request_errors_array, clearRequestErrors: rd_kafka_mock_clear_request_errors,
        groupInitialDelay: linkedSymbol("rd_kafka_mock_group_initial_rebalance_delay_ms"),
        versionString: rd_kafka_version_str, confNew: nil, confSet: nil, clientNew: nil, clientDestroy: nil)

    private static let cache = Mutex<[String: RDKafkaMockLibrary]>([:])

    /// The copy of librdkafka at `path`, loaded once per process.
    /// - Throws: `KafkaError` `.developmentCluster` naming the file when it cannot be loaded or
    ///   lacks a function of the mock.
    static func load(path: String) throws -> RDKafkaMockLibrary {
        try cache.withLock { loaded in
            if let library = loaded[path] { return library }
            guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND) else {
                let reason = dlerror().map { String(cString: $0) } ?? "unknown error"
                throw KafkaError(code: .developmentCluster, detail: "cannot load the mock's librdkafka \(path): \(reason)")
            }
            func required<T>(_ name: String, as type: T.Type) throws -> T {
                guard let symbol = dlsym(handle, name) else {
                    throw KafkaError(code: .developmentCluster, detail: "\(path) has no \(name): not a librdkafka with a mock cluster")
                }
                return unsafeBitCast(symbol, to: type)
            }
            let library = RDKafkaMockLibrary(
                path: path,
                clusterNew: try required("rd_kafka_mock_cluster_new", as: ClusterNew.self),
                clusterBootstraps: try required("rd_kafka_mock_cluster_bootstraps", as: ClusterBootstraps.self),
                clusterDestroy: try required("rd_kafka_mock_cluster_destroy", as: ClusterDestroy.self),
                topicCreate: try required("rd_kafka_mock_topic_create", as: TopicCreate.self),
                brokerSetDown: try required("rd_kafka_mock_broker_set_down", as: BrokerSet.self),
                brokerSetUp: try required("rd_kafka_mock_broker_set_up", as: BrokerSet.self),
                partitionSetLeader: try required("rd_kafka_mock_partition_set_leader", as: PartitionSetLeader.self),
                coordinatorSet: try required("rd_kafka_mock_coordinator_set", as: CoordinatorSet.self),
                pushRequestErrors: try required("rd_kafka_mock_push_request_errors_array", as: PushRequestErrors.self),
                clearRequestErrors: try required("rd_kafka_mock_clear_request_errors", as: ClearRequestErrors.self),
                groupInitialDelay: dlsym(handle, "rd_kafka_mock_group_initial_rebalance_delay_ms")
                    .map { unsafeBitCast($0, to: GroupInitialDelay.self) },
                versionString: try required("rd_kafka_version_str", as: VersionString.self),
                confNew: try required("rd_kafka_conf_new", as: ConfNew.self),
                confSet: try required("rd_kafka_conf_set", as: ConfSet.self),
                clientNew: try required("rd_kafka_new", as: ClientNew.self),
                clientDestroy: try required("rd_kafka_destroy", as: ClientDestroy.self))
            loaded[path] = library
            return library
        }
    }

    private static func linkedSymbol(_ name: String) -> GroupInitialDelay? {
        // RTLD_DEFAULT is ((void *) 0) in glibc.
        dlsym(UnsafeMutableRawPointer(bitPattern: 0), name).map { unsafeBitCast($0, to: GroupInitialDelay.self) }
    }

    /// A quiet producer handle of the loaded library to host its mock cluster.
    func newHost() throws -> OpaquePointer {
        guard let confNew, let confSet, let clientNew else {
            throw KafkaError(code: .developmentCluster, detail: "the linked librdkafka hosts its mock through RDKafkaHandle")
        }
        guard let configuration = confNew() else {
            throw KafkaError(code: .developmentCluster, detail: "rd_kafka_conf_new of \(path ?? "") failed")
        }
        var errorText = [CChar](repeating: 0, count: 512)
        _ = confSet(configuration, "log_level", "3", &errorText, errorText.count)
        guard let host = clientNew(RD_KAFKA_PRODUCER, configuration, &errorText, errorText.count) else {
            throw KafkaError(code: .developmentCluster, detail: "rd_kafka_new of \(path ?? "") failed: \(String(cStringBuffer: errorText))")
        }
        return host
    }
}
