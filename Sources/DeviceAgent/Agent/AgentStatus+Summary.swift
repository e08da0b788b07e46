import Foundation

extension AgentStatus {
    /// A few lines for people.
    public var summary: String {
        var lines = [
            "device \(deviceID.uuidString.lowercased()) of user \(userID.uuidString.lowercased())",
            "family members: \(familyMembers.count)  (at-rest encryption: \(atRestEncryption ? "on" : "off"))",
        ]
        for member in familyMembers {
            lines.append(
                "  \(member.familyMemberID.uuidString.lowercased())  \(member.status)  FMK v\(member.fmkVersion)"
                    + "  (floor v\(member.versionFloor))  \(member.records) record(s)")
        }
        if let command = lastCommand {
            lines.append(
                "last command: \(command.action) for \(command.familyMemberID.uuidString.lowercased()) v\(command.fmkVersion)"
                    + " → \(command.outcome ?? command.state)")
        } else {
            lines.append("last command: none")
        }
        lines.append("pending commands: \(pendingCommands), acks owed: \(owedAcks), acks sent: \(sentAcks)")
        if owedReceipts > 0 { lines.append("receipts owed: \(owedReceipts)") }
        if sealedCommands > 0 { lines.append("sealed commands waiting for the unlock: \(sealedCommands)") }
        for notice in pendingGovernance { lines.append("! " + AgentEngine.describe(notice, on: deviceID)) }
        if !counters.isEmpty {
            lines.append("counters: " + counters.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))
        }
        return lines.joined(separator: "\n")
    }
}
