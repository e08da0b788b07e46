import Foundation
import Testing
import RescindClient

@testable import DeviceAgent

/// What the command consumer retries and what it quarantines (pure).
@Suite("Command failure classification (pure)")
struct CommandFailureTests {
    @Test("a busy store and an unreachable grant service are retried; anything else is the message's")
    func classification() {
        #expect(CommandFailure.classify(AgentError(.storageBusy, "busy")) == .transient)
        #expect(CommandFailure.classify(AgentError(.unavailable, "down")) == .transient)
        #expect(CommandFailure.classify(AgentError(.serviceBehind, "behind")) == .transient)
        #expect(CommandFailure.classify(AgentError(.storage, "constraint")) == .content)
        #expect(CommandFailure.classify(AgentError(.verificationFailed, "bad")) == .content)
        #expect(CommandFailure.classify(CocoaError(.fileReadCorruptFile)) == .content)
    }
}
