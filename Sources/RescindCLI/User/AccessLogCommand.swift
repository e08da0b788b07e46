import ArgumentParser
import Foundation
import RescindClient
import RescindConfiguration
import RescindProtocol

/// The owner's access log, decrypted here.
struct AccessLogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "access-log",
        abstract: "Read a family member's access log, decrypting its details with your key.",
        discussion: """
            The audit service stores each entry's details sealed to the owner's X25519 key; only
            this machine can open them. Add --verify to check the hash chain here, without trusting
            the audit service: every entry's hash, link and signature, and the signed chain head,
            against the audit service's key pinned in the profile directory on first use
            (audit-service.key). A changed key is refused unless --accept-new-audit-key. The
            head verified last is remembered there too (access-log-heads.json): a log that later
            ends before it, or holds another entry at its seq, is refused even when every
            signature is valid (an older signed head restored, a log cut back and written again).

            With --json: {family_member_id, entries: [{seq, occurred_at, event_type,
            actor_user_id, target_user_id, details}], verification} — details as opened here
            (absent when sealed to another key), verification only with --verify.

            Examples:
              rescind access-log 6f1c… --verify
              rescind access-log 6f1c… --verify --json
            """)
    @OptionGroup var profile: ProfileOptions
    @Argument(help: "Family member id.") var familyMember: UUID
    @Flag(help: "Also verify the tamper-evident chain here, with the audit service's pinned key.") var verify = false
    @Flag(help: "Pin the key the audit service serves now in place of the pinned one (after comparing its fingerprint).")
    var acceptNewAuditKey = false
    @OptionGroup var output: JSONOption

    /// The log as `--json` prints it.
    struct Document: Encodable {
        struct Entry: Encodable {
            let seq: Int64
            let occurredAt: Date
            let eventType: String
            let actorUserID: UUID
            let targetUserID: UUID?
            let details: AuditDetails?

        }

        struct Verification: Encodable {
            let report: ChainVerificationReport
            let auditKeyFingerprint: String

        }

        let familyMemberID: UUID
        let entries: [Entry]
        let verification: Verification?

    }

    func run() async throws {
        let session = try await profile.session()
        let audit = AuditServiceClient(baseURL: try profile.auditServiceURL, grantService: session.client)
        // Checked first: a refused audit key is one line, before anything the service served is shown.
        var outcome: AccessLogVerifier.Outcome?
        if verify {
            let verifier = AccessLogVerifier(audit: audit, pin: AuditKeyPin(directory: profile.directory))
            do {
                outcome = try await verifier.verify(familyMember, acceptNewKey: acceptNewAuditKey)
            } catch let changed as AuditKeyPin.Changed {
                throw CLIError(changed.description)
            }
        }
        var names: [UUID: String] = [:]
        func name(_ id: UUID?) async -> String {
            guard let id else { return "" }
            if let known = names[id] { return known }
            let found = (try? await session.client.user(id).displayName) ?? String(id.uuidString.prefix(8)).lowercased()
            names[id] = found
            return found
        }
        // Newest first by when it happened: the chain is in the order the audit service read its
        // topics, and revocation and access events share no order across topics.
        let entries = try await audit.fullAccessLog(familyMember).sorted {
            ($0.occurredAt, $0.seq) > ($1.occurredAt, $1.seq)
        }
        if output.json {
            try output.print(
                Document(
                    familyMemberID: familyMember,
                    entries: entries.map {
                        Document.Entry(
                            seq: $0.seq, occurredAt: $0.occurredAt, eventType: $0.eventType, actorUserID: $0.actorUserID,
                            targetUserID: $0.targetUserID, details: try? AuditServiceClient.details(of: $0, keys: session.keys))
                    },
                    verification: outcome.map { Document.Verification(report: $0.report, auditKeyFingerprint: $0.fingerprint) }))
            if outcome?.report.valid == false { throw ExitCode(ExitStatus.verificationFailed.rawValue) }
            return
        }
        for entry in entries {
            let details = try? AuditServiceClient.details(of: entry, keys: session.keys)
            var line = "\(Timestamp.format(entry.occurredAt))  \(entry.eventType.replacingOccurrences(of: "_", with: " "))"
            if entry.targetUserID != nil { line += " for \(await name(entry.targetUserID))" }
            line += " (by \(await name(entry.actorUserID)))"
            if let details {
                if let records = details.recordsReEncrypted { line += ", \(records) records re-encrypted" }
                if let devices = details.devicesAffected { line += ", \(devices.count) devices" }
                if let duration = details.commitToLastAckMs ?? details.durationMs { line += ", \(duration) ms" }
                if let reason = details.reason { line += " — \(reason)" }
                if let violation = details.violation {
                    line += ": \(violation.code.rawValue.replacingOccurrences(of: "_", with: " ")) reported by device "
                        + "\(violation.reporterDeviceID.uuidString.prefix(8).lowercased()) — \(violation.detail)"
                }
            } else {
                line += " [details sealed to another key]"
            }
            print(line)
        }
        if let outcome {
            let report = outcome.report
            let signer = "audit service key \(outcome.fingerprint)" + (outcome.pinnedNow ? " (pinned now)" : " (pinned)")
            if report.valid {
                let head = report.headHash.map { $0.map { String(format: "%02x", $0) }.joined() } ?? "none (empty log)"
                print("chain verified on this machine: \(report.entries) entries, none altered, removed, reordered or added")
                print("  head hash \(head)")
                print("  signed by \(signer)")
            } else {
                print("CHAIN BROKEN (checked on this machine with \(signer)): "
                    + report.problems.map { "#\($0.seq) \($0.code): \($0.message)" }.joined(separator: "; "))
                throw ExitCode(ExitStatus.verificationFailed.rawValue)
            }
        }
    }
}

/// A revocation's per-device acknowledgement state, as the operator or as the owner.
struct RevocationStatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revocation",
        abstract: "Show a revocation's per-device command state and its history from the audit service.",
        discussion: """
            The audit service answers its operator (the token in --operator-token-file or
            $RESCIND_AUDIT_OPERATOR_TOKEN_FILE), or the owner of the revoked family member
            (this profile's grant-service credentials, used when no operator token is given).

            --exposure (the owner's, with this profile's keys): what the revoked user's devices had
            fetched when it was committed — sealed to you by the grant service — joined with whether
            each acknowledged its erasure, and what revocation cannot undo.

            Examples:
              rescind revocation 0c8e…
              rescind revocation 0c8e… --exposure
              rescind revocation 0c8e… --json
              rescind revocation 0c8e… --operator-token-file .stack/demo/keys/audit-operator.token
            """)
    @OptionGroup var profile: ProfileOptions
    @Argument(help: "Revocation event id.") var eventID: UUID
    @Option(help: "File holding the audit service's operator token (default: $RESCIND_AUDIT_OPERATOR_TOKEN_FILE).")
    var operatorTokenFile: String?
    @Flag(help: "The owner's exposure report: what each device of the revoked user had fetched, and whether it erased.")
    var exposure = false
    @Flag(help: "Print the state as the audit service's JSON; with --exposure, the opened report document (schemas/rescind.revocation_exposure.v1).")
    var json = false

    func run() async throws {
        if exposure { return try await ExposureCommand.run(eventID: eventID, profile: profile, json: json) }
        let audit: AuditServiceClient
        if let path = operatorTokenFile ?? EnvironmentReader.value("RESCIND_AUDIT_OPERATOR_TOKEN_FILE", in: profile.environment) {
            audit = AuditServiceClient(
                baseURL: try profile.auditServiceURL, operatorToken: try AuditServiceClient.operatorToken(fromFile: path),
                tls: try profile.tls)
        } else {
            let session = try await profile.session()
            audit = AuditServiceClient(baseURL: try profile.auditServiceURL, grantService: session.client, tls: try profile.tls)
        }
        let status = try await audit.revocation(eventID)
        if json { return print(String(decoding: try CanonicalJSON.encode(status), as: UTF8.self)) }
        print("family member \(status.familyMemberID.uuidString.lowercased()) → FMK v\(status.newFMKVersion), \(status.recordsReencrypted) records")
        print("committed \(Timestamp.format(status.committedAt)); "
            + (status.completedAt.map { "complete \(Timestamp.format($0)) (commit → last ack \(status.commitToLastAckMs ?? 0) ms)" }
                ?? "deadline \(Timestamp.format(status.deadlineAt))"))
        for device in status.devices {
            let acked = device.ackedAt.map { " at \(Timestamp.format($0))" } ?? ""
            let attempts = (device.attempts ?? 1) > 1 ? ", attempt \(device.attempts ?? 1)" : ""
            print("  \(device.deviceID.uuidString.lowercased())  \(device.action.rawValue)  \(device.state)\(acked)\(attempts)\(device.late ? " (late)" : "")\(device.error.map { " — \($0)" } ?? "")")
            // The lifecycle: issued, receipts (delivered, not now), answers, overdue, re-issues.
            for step in device.history ?? [] {
                let attempt = (step.attempt ?? 1) > 1 ? " (attempt \(step.attempt ?? 1))" : ""
                print("      \(Timestamp.format(step.at))  \(step.state)\(attempt)\(step.error.map { " — \($0)" } ?? "")")
            }
        }
    }
}
