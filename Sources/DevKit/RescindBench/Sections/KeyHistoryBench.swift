import Foundation
import RescindClient
import RescindCrypto
import RescindProtocol

/// 2b. What verifying the owner-signed key history costs: a key fetch with
/// and without verification, and the 500-record revocation with the verification's share, in
/// the same run. Bounds: at most 1 ms per key fetch, at most 5% of the revocation.
enum KeyHistoryBench {
    static let revocationRecords = 500

    static func run(stack: BenchStack, options: BenchOptions, report: BenchReport) async throws {
        report.begin("2b. Key-history verification: key fetch and 500-record revocation, with and without")
        let owner = try await stack.register("Key history owner")
        let seeded = try await RecordSeeder.seed(stack, owner: owner, count: revocationRecords, byteCount: options.recordBytes)
        let fetches = max(20, options.runs * 10)

        // The 500-record revocation, verification included (the service requires the statement).
        var totals: [Double] = [], signing: [Double] = []
        for index in 0..<options.runs {
            let grantee = try await stack.register("Key history grantee \(index)")
            try await owner.grant(seeded.familyMemberID, to: grantee.keys.userID)
            let start = ContinuousClock.now
            _ = try await owner.revoke(seeded.familyMemberID, user: grantee.keys.userID, uploadBatchSize: options.uploadBatch)
            totals.append(Timing.seconds(ContinuousClock.now - start))
            let entry = try await owner.verifiedKey(seeded.familyMemberID).entry
            let signStart = ContinuousClock.now
            _ = try SignedKeyStatement(signing: entry.head.statement, with: owner.keys.identityKey)
            signing.append(Timing.seconds(ContinuousClock.now - signStart))
        }

        // A key fetch end to end: the same request (statements after the verified head), verified
        // and only unwrapped (as clients did before key histories were verified). Network noise
        // dominates the difference.
        var raw: [Double] = [], verified: [Double] = []
        for _ in 0..<fetches {
            let known = owner.keyHistory.entry(seeded.familyMemberID)?.seq ?? 0
            var start = ContinuousClock.now
            let wrapped = try await owner.client.wrappedKey(seeded.familyMemberID, knownSeq: known)
            _ = try owner.unwrap(wrapped)
            raw.append(Timing.seconds(ContinuousClock.now - start))
            start = ContinuousClock.now
            _ = try await owner.verifiedKey(seeded.familyMemberID)
            verified.append(Timing.seconds(ContinuousClock.now - start))
        }
        report.add(
            "key fetch, end to end (median of \(fetches))", project: Format.duration(Statistics.median(verified)),
            baseline: Format.duration(Statistics.median(raw)),
            ratio: String(format: "%+.3f ms (network noise)", (Statistics.median(verified) - Statistics.median(raw)) * 1000))

        // What verification adds to a key fetch on the client's CPU: the typical fetch after a
        // revocation (one new statement over the cached head) verified and unwrapped, against the
        // same wrapped key only unwrapped; and a first use (the whole history).
        let history = try await owner.client.keyStatements(seeded.familyMemberID, after: 0).statements
        let wrapped = try await owner.client.wrappedKey(seeded.familyMemberID, knownSeq: history.count - 1)
        let cached = try KeyHistoryVerifier.extend(familyMemberID: seeded.familyMemberID, cached: nil, statements: Array(history.dropLast()))
        let fingerprint = KeyStatement.fingerprint(ofAgreementKey: Data(owner.keys.agreementKey.publicKey.rawRepresentation))
        var unwrapOnly: [Double] = [], verifyAndUnwrap: [Double] = [], firstUse: [Double] = []
        for _ in 0..<fetches {
            var start = ContinuousClock.now
            _ = try owner.unwrap(wrapped)
            unwrapOnly.append(Timing.seconds(ContinuousClock.now - start))
            start = ContinuousClock.now
            _ = try await KeyHistoryVerifier.verify(
                familyMemberID: seeded.familyMemberID, cached: cached, statements: wrapped.keyStatements ?? [], wrapped: wrapped,
                me: owner.keys.userID, myAgreementFingerprint: fingerprint, registeredOwnerKey: { _ in Data() },
                unwrap: { try owner.unwrap($0) })
            verifyAndUnwrap.append(Timing.seconds(ContinuousClock.now - start))
            start = ContinuousClock.now
            _ = try KeyHistoryVerifier.extend(familyMemberID: seeded.familyMemberID, cached: nil, statements: history)
            firstUse.append(Timing.seconds(ContinuousClock.now - start))
        }
        let fetchOverhead = Statistics.median(verifyAndUnwrap) - Statistics.median(unwrapOnly)
        report.add(
            "key fetch: verify 1 new statement + unwrap vs unwrap only (client CPU, median of \(fetches))",
            project: Format.duration(Statistics.median(verifyAndUnwrap)), baseline: Format.duration(Statistics.median(unwrapOnly)),
            ratio: String(format: "+%.3f ms (bound: ≤ 1 ms)", fetchOverhead * 1000))

        let total = Statistics.median(totals)
        let share = fetchOverhead + Statistics.median(signing)
        report.add(
            "500-record revocation (median of \(options.runs)), without = minus the verification's share",
            project: Format.duration(total), baseline: Format.duration(total - share),
            ratio: String(format: "+%.3f ms = %.2f%% (bound: ≤ 5%%)", share * 1000, share / total * 100))
        report.add(
            "first use: verifying the whole history of \(history.count) statements", project: Format.duration(Statistics.median(firstUse)))
        report.note(
            "A revocation cannot run without its statement (the service requires it), so its \"without\" is the same run minus "
                + "what verification adds on the client: one verified key fetch over an unverified one (client CPU) and one "
                + "statement signed. The service's check (one Ed25519 verification, three small SELECTs and one INSERT in the "
                + "commit's transaction) is inside the measured total.")
    }
}
