import Foundation
import RescindClient
import RescindCrypto
import RescindProtocol

/// 2b. What verifying the owner-signed key history costs (issue 16, item 8): a key fetch with
/// and without verification, and the 500-record revocation with the verification's share, in
/// the same run. Bounds: at most 1 ms per key fetch, at most 5% of the revocation.
enum KeyHistoryBench {
    static let revocationRecords = 500

    static func run(stack: BenchStack, options: BenchOptions, report: BenchReport) async throws {
        report.begin("2b. Key-history verification: key fetch and 500-record revocation, with and without")
        let owner = try await stack.register("Key history owner")
        let seeded = try await RecordSeeder.seed(stack, owner: owner, count: revocationRecords, byteCount: options.recordBytes)
        let fetches = max(20, options.runs * 10)

        // A key fetch: the same request (statements after the verified head, i.e. none new), with
        // the client's verification and without it (the wrapped key unwrapped as before issue 16).
        _ = try await owner.verifiedKey(seeded.familyMemberID)
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
        let fetchOverhead = Statistics.median(verified) - Statistics.median(raw)
        report.add(
            "key fetch (median of \(fetches))", project: Format.duration(Statistics.median(verified)),
            baseline: Format.duration(Statistics.median(raw)),
            ratio: String(format: "+%.3f ms (bound: ≤ 1 ms)", fetchOverhead * 1000))

        // The verification alone, from nothing (a new device): the whole chain of this family member.
        let history = try await owner.client.keyStatements(seeded.familyMemberID, after: 0).statements
        var firstUse: [Double] = []
        for _ in 0..<fetches {
            let start = ContinuousClock.now
            _ = try KeyHistoryVerifier.extend(familyMemberID: seeded.familyMemberID, cached: nil, statements: history)
            firstUse.append(Timing.seconds(ContinuousClock.now - start))
        }

        // The 500-record revocation: its total (everything, verification included), and the
        // verification's share: the verified fetch over the unverified one, the new statement's
        // signature, and checking one more statement.
        var totals: [Double] = [], signing: [Double] = []
        for index in 0..<options.runs {
            let grantee = try await stack.register("Key history grantee \(index)")
            try await owner.grant(seeded.familyMemberID, to: grantee.keys.userID)
            let start = ContinuousClock.now
            _ = try await owner.revoke(seeded.familyMemberID, user: grantee.keys.userID, uploadBatchSize: options.uploadBatch)
            totals.append(Timing.seconds(ContinuousClock.now - start))
            let entry = try await owner.verifiedKey(seeded.familyMemberID).entry
            let signStart = ContinuousClock.now
            _ = try SignedKeyStatement(signing: entry.head.statement.withSigner(owner.keys), with: owner.keys.identityKey)
            signing.append(Timing.seconds(ContinuousClock.now - signStart))
        }
        let total = Statistics.median(totals)
        let share = fetchOverhead + Statistics.median(signing) + Statistics.median(firstUse) / Double(max(history.count, 1))
        report.add(
            "500-record revocation (median of \(options.runs))", project: Format.duration(total),
            baseline: Format.duration(total - share),
            ratio: String(format: "verification %.3f ms = %.2f%% (bound: ≤ 5%%)", share * 1000, share / total * 100))
        report.add(
            "verifying a whole history of \(history.count) statements (first use)", project: Format.duration(Statistics.median(firstUse)))
        report.note(
            "Without verification = the same request, with the wrapped key only unwrapped (as clients did before issue 16). "
                + "The revocation's verification share is what the client adds: one verified key fetch over the unverified one, "
                + "one statement signed, one statement checked; the service's check of the statement is inside the commit "
                + "(one Ed25519 verification and two small SELECTs in its transaction).")
    }
}

extension KeyStatement {
    /// The statement re-signed by `keys` (for timing a signature over a realistic statement).
    fileprivate func withSigner(_ keys: UserKeys) -> KeyStatement {
        var statement = self
        statement.signerIdentityKey = Data(keys.identityKey.publicKey.rawRepresentation)
        return statement
    }
}
