import Foundation
import RescindObservability

#if FUZZING
/// libFuzzer's entry point; the target is chosen by `RESCIND_FUZZ_TARGET` (scripts/fuzz.sh).
private let selectedTarget: FuzzTarget = {
    let name = ProcessInfo.processInfo.environment["RESCIND_FUZZ_TARGET"] ?? ""
    guard let target = FuzzTarget(rawValue: name) else {
        fatalError("RESCIND_FUZZ_TARGET must be one of \(FuzzTarget.allCases.map(\.rawValue))")
    }
    return target
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func rescindFuzzOneInput(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    selectedTarget.run(bytes.map { Data(bytes: $0, count: count) } ?? Data())
    return 0
}

/// libFuzzer's driver (compiler-rt), declared here: only simple C types cross.
@_silgen_name("LLVMFuzzerRunDriver")
private func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// SwiftPM links an executable's entry point as `<module>_main` (`main` is defined as it), so
/// libFuzzer's own `main` is never linked: this hands the process to libFuzzer's driver instead.
@_cdecl("RescindFuzz_main")
public func rescindFuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var arguments = argv
    return runFuzzerDriver(&count, &arguments) { bytes, size in rescindFuzzOneInput(bytes, size) }
}
#else
/// Without the sanitizer: `rescind-fuzz <target> <file or directory>…` replays inputs (a
/// corpus, a crash libFuzzer wrote) through a target in a normal build.
@main
struct FuzzReplay {
    static func main() throws {
        RescindVersion.answerIfAsked()
        let arguments = CommandLine.arguments.dropFirst()
        guard let name = arguments.first, let target = FuzzTarget(rawValue: name), arguments.count > 1 else {
            print("usage: rescind-fuzz \(FuzzTarget.allCases.map(\.rawValue).joined(separator: "|")) <file or directory>…")
            print("Fuzzing itself: scripts/fuzz.sh (a -sanitize=fuzzer build in .build-fuzz).")
            exit(2)
        }
        var replayed = 0
        for path in arguments.dropFirst() {
            for file in try files(at: path) {
                target.run(try Data(contentsOf: file))
                replayed += 1
            }
        }
        print("\(name): \(replayed) input(s) replayed, no finding")
    }

    static func files(at path: String) throws -> [URL] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: path])
        }
        let url = URL(fileURLWithPath: path)
        guard isDirectory.boolValue else { return [url] }
        return try FileManager.default.contentsOfDirectory(at: url, includingPropertiesForKeys: nil)
            .filter { !$0.lastPathComponent.hasPrefix(".") }.sorted { $0.path < $1.path }
    }
}
#endif
