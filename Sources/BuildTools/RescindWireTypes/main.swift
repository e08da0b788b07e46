import Foundation

// RescindWireTypes OUTPUT.swift DOCUMENT.yaml…: the build step of WireTypesPlugin.
let arguments = CommandLine.arguments.dropFirst()
guard arguments.count >= 2, let output = arguments.first else {
    FileHandle.standardError.write(Data("usage: RescindWireTypes OUTPUT.swift DOCUMENT.yaml...\n".utf8))
    exit(64)
}
do {
    let documents = try arguments.dropFirst().map { path in
        (name: path, text: try String(contentsOfFile: path, encoding: .utf8))
    }
    let source = try WireTypeGenerator.generate(documents: documents)
    // Written only when changed, so that an unchanged document rebuilds nothing.
    if (try? String(contentsOfFile: output, encoding: .utf8)) != source {
        try source.write(toFile: output, atomically: true, encoding: .utf8)
    }
} catch {
    FileHandle.standardError.write(Data("error: \(error)\n".utf8))
    exit(1)
}
