import Foundation
import PackagePlugin

/// Generates RescindProtocol's HTTP wire types from the two services' OpenAPI documents, the one
/// statement of their fields (`RescindWireTypes` says how a schema becomes Swift).
@main
struct WireTypesPlugin: BuildToolPlugin {
    /// The documents, relative to the package; each service serves its own copy.
    static let documents = ["Sources/GrantService/Resources/openapi.yaml", "Sources/AuditService/Resources/openapi.yaml"]

    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let inputs = Self.documents.map { context.package.directoryURL.appending(path: $0) }
        let output = context.pluginWorkDirectoryURL.appending(path: "WireTypes.swift")
        return [
            .buildCommand(
                displayName: "Generating the wire types of \(target.name) from the OpenAPI documents",
                executable: try context.tool(named: "RescindWireTypes").url,
                arguments: [output.path] + inputs.map(\.path),
                inputFiles: inputs,
                outputFiles: [output])
        ]
    }
}
