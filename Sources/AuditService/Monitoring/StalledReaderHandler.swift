import NIOCore
import RescindObservability

/// Closes a connection whose client has not taken what the server wrote for `timeout`: the
/// channel stayed unwritable (its outbound buffer above NIO's high-water mark, the socket
/// full). An event stream whose reader stalls is disconnected — its blocked write fails,
/// its slot is freed — instead of holding events for ever; it resumes with `Last-Event-ID`.
/// A client that reads what it is sent never triggers it.
final class StalledReaderHandler: ChannelInboundHandler, RemovableChannelHandler {
    /// Never unwrapped: reads pass through untouched.
    typealias InboundIn = Never

    private let timeout: TimeAmount
    private let onClose: @Sendable () -> Void
    private var pending: Scheduled<Void>?

    init(timeout: Duration, onClose: @escaping @Sendable () -> Void = {}) {
        self.timeout = .nanoseconds(timeout.wholeNanoseconds)
        self.onClose = onClose
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            pending?.cancel()
            pending = nil
        } else if pending == nil {
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            let onClose = self.onClose
            pending = context.eventLoop.scheduleTask(in: timeout) {
                onClose()
                bound.value.close(promise: nil)
            }
        }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        pending?.cancel()
        pending = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        pending?.cancel()
        pending = nil
    }
}
